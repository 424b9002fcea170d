"""Grades on a GPU against grades on the CPU, in one prepared command (maintainers; issue 42).

    make check-gpu                      # with CUDA: every case on the CPU and on the GPU
    make check-gpu DEVICE=cpu           # the dry run: the same cases on the CPU alone
    python3 tests/check_gpu.py [--cpu-only] [--out DIR] [--only WORD ...] [--jobs N]

Each case is graded in the sandboxed worker, as the command line grades a file
(``engine.grade_notebook_file``), once as written and once with TF32 turned on at the top of
the notebook, with ``--device cpu`` and ``--device cuda``:

- the solutions notebook (every stage, the bonus too);
- every catalogued mistake (tests/catalog/mistakes, on its stage and the stages that use it);
- the correct variants, the fakes and the call-policy submissions (SDPA in stages 3 to 7);
- the bonus stage's answers (tests/catalog/efficiency_base.py, SDPAMultiHeadAttention among them).

It prints one table (each case's grades and whether they are all the same), the fences each
device's worker reported, each stage's median seconds on each device, and a last line
``N cases, M differ``. Two gradings are the same when the same checks pass. The printed text
goes to DIR/check-gpu.md and each grading, as it ends, to DIR/check-gpu.jsonl (what a run cut
short leaves). Exit status: 0 when no case differs, 1 otherwise, 2 when CUDA is missing
without --cpu-only.

It needs what the grader needs (torch, numpy, hypothesis, rich) and pytest: the borrowed GPU
machine's own Python has them all, so nothing travels but the working tree
(docs/maintainers-torch.md, "GPU").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS.parent), str(TESTS), str(TESTS / "e2e")]

import test_catalog as catalog  # noqa: E402  (the catalog's cases, as its tests grade them)
from support import SOLUTION  # noqa: E402

from autograder.chapters.ch03_attention import CHAPTER  # noqa: E402
from autograder.sandbox.launch import start_fork_server  # noqa: E402

# What a nanoGPT-style notebook puts at its top.
TF32_ON = ("import torch\n"
           "torch.backends.cuda.matmul.allow_tf32 = True\n"
           "torch.backends.cudnn.allow_tf32 = True\n"
           'torch.set_float32_matmul_precision("high")\n')
VARIANTS = ("as written", "TF32 on")
DEVICE_NAMES = {"cpu": "CPU", "cuda": "GPU"}


def cases() -> list[tuple[str, str, str, list[int]]]:
    """(name, source, suffix, stages) of every case."""
    every = [s.number for s in CHAPTER.stages]
    found = [("solutions", SOLUTION.read_text(), ".ipynb", every)]
    in_course = set(every)
    for path in catalog.MISTAKES:
        if catalog.read_mistake(path).stage in in_course:
            _, source, stages = catalog.grading_job(path, Path("."))
            found.append((f"mistake {path.stem}", source, ".py", stages))
    for kind in ("correct", "fakes", "policy"):
        for path in sorted((catalog.CATALOG / kind).glob("*.py")):
            found.append((f"{kind} {path.stem}", path.read_text(), ".py", catalog.GRADED))
    bonus = [s.number for s in CHAPTER.stages if s.bonus]
    if bonus:
        source = f"{catalog.BASE.read_text()}\n\n{catalog.BONUS_BASE.read_text()}"
        found.append(("bonus answers (efficiency_base)", source, ".py", bonus))
    return found


def with_tf32(source: str, suffix: str) -> str:
    """The submission with TF32 turned on before its first line."""
    if suffix != ".ipynb":
        return TF32_ON + "\n" + source
    notebook = json.loads(source)
    notebook["cells"].insert(0, {"cell_type": "code", "metadata": {}, "execution_count": None,
                                 "outputs": [], "source": TF32_ON})
    return json.dumps(notebook)


def grade(job: dict) -> dict:
    """One grading in the sandboxed worker, reduced to plain data."""
    from autograder.core.engine import grade_notebook_file
    from autograder.sandbox.confinement import describe

    path = Path(job["folder"]) / f"case{job['index']}-{job['variant'].replace(' ', '_')}-{job['device']}{job['suffix']}"
    path.write_text(job["source"])
    report = grade_notebook_file(str(path), CHAPTER, job["stages"], job["device"])
    return {key: job[key] for key in ("case", "variant", "device")} | {
        "error": report.error or "",
        "grade": " ".join(filter(None, [f"{report.score:g}/{report.max_score:g}" if report.max_score else "",
                                        f"+{report.bonus_score:g}/{report.bonus_max_score:g} bonus" if report.bonus_max_score else ""])),
        "passed": sorted(c.check.id for c in report.checks if c.score),
        "stage_seconds": {str(r.stage.number): round(r.seconds, 3) for r in report.stages},
        "fences": describe(report.confinement),
    }


def differences(grades: list[dict]) -> str:
    """'' when every grading of a case passed the same checks; else what differs."""
    first = grades[0]
    notes = []
    for other in grades[1:]:
        if (other["passed"], other["error"]) != (first["passed"], first["error"]):
            gained = sorted(set(other["passed"]) - set(first["passed"]))
            lost = sorted(set(first["passed"]) - set(other["passed"]))
            label = f"{DEVICE_NAMES[other['device']]} {other['variant']}"
            notes.append(f"{label}: " + ", ".join(filter(None, [f"passes {' '.join(gained)}" if gained else "",
                                                                  f"fails {' '.join(lost)}" if lost else "",
                                                                  f"error {other['error'][:80]}" if other["error"] else ""])))
    return "; ".join(notes)


def report(results: list[dict], devices: list[str], case_names: list[str], seconds: float) -> tuple[str, int]:
    columns = [(d, v) for d in devices for v in VARIANTS]
    by_case = {name: {} for name in case_names}
    for r in results:
        by_case[r["case"]][(r["device"], r["variant"])] = r
    lines = ["| case | " + " | ".join(f"{DEVICE_NAMES[d]}, {v}" for d, v in columns) + " | same |",
             "|---" * (len(columns) + 2) + "|"]
    differ = 0
    for name, graded in by_case.items():
        row = [graded[c]["grade"] if c in graded else "not graded" for c in columns]
        missing = len(graded) < len(columns)
        diff = "not every grading ran" if missing else differences([graded[c] for c in columns])
        differ += bool(diff)
        lines.append(f"| {name} | " + " | ".join(row) + f" | {'no: ' + diff if diff else 'yes'} |")
    lines += ["", "Fences in force (as each device's worker reported them):"]
    for device in devices:
        for fences in sorted({r["fences"] for r in results if r["device"] == device}):
            lines.append(f"- {DEVICE_NAMES[device]}: {fences}")
    lines += ["", "| stage | " + " | ".join(f"{DEVICE_NAMES[d]} median s (max)" for d in devices) + " |",
              "|---" * (len(devices) + 1) + "|"]
    for stage in CHAPTER.stages:
        cells = []
        for device in devices:
            times = [r["stage_seconds"][str(stage.number)] for r in results
                     if r["device"] == device and str(stage.number) in r["stage_seconds"]]
            cells.append(f"{statistics.median(times):.2f} ({max(times):.2f}), {len(times)} gradings" if times else "-")
        lines.append(f"| {stage.label} | " + " | ".join(cells) + " |")
    lines += ["", f"{len(results)} gradings in {seconds:.0f} s", f"{len(case_names)} cases, {differ} differ"]
    return "\n".join(lines), differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-only", action="store_true", help="the dry run: every case on the CPU alone")
    parser.add_argument("--out", default="build/check-gpu", help="where check-gpu.md and check-gpu.jsonl go")
    parser.add_argument("--only", nargs="*", default=(), help="only the cases whose name holds one of these words")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="gradings at a time (default: one per core)")
    args = parser.parse_args(argv)
    import torch

    devices = ["cpu"] if args.cpu_only else ["cpu", "cuda"]
    if "cuda" in devices and not torch.cuda.is_available():
        print("make check-gpu: no CUDA device here; make check-gpu DEVICE=cpu is the dry run on the CPU", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    header = [f"torch {torch.__version__}, Python {sys.version.split()[0]}"]
    if "cuda" in devices:
        header.append(f"GPU {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda}, driver {_driver()}")
    selected = [c for c in cases() if not args.only or any(word in c[0] for word in args.only)]
    started = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="check-gpu-") as folder, (out / "check-gpu.jsonl").open("w") as log, \
            ProcessPoolExecutor(max(1, args.jobs), mp_context=multiprocessing.get_context("spawn"),
                                initializer=start_fork_server) as pool:
        jobs = [{"case": name, "index": i, "variant": variant, "device": device, "folder": folder, "suffix": suffix,
                 "stages": stages, "source": source if variant == VARIANTS[0] else with_tf32(source, suffix)}
                for i, (name, source, suffix, stages) in enumerate(selected) for variant in VARIANTS for device in devices]
        for done in as_completed([pool.submit(grade, job) for job in jobs]):
            result = done.result()
            results.append(result)
            log.write(json.dumps(result) + "\n")
            log.flush()
    text, differ = report(results, devices, [c[0] for c in selected], time.monotonic() - started)
    text = "\n".join(header) + "\n\n" + text
    (out / "check-gpu.md").write_text(text + "\n")
    print(text)
    return 1 if differ else 0


def _driver() -> str:
    import subprocess

    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
