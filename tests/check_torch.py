"""The grader under another PyTorch release, in a venv of its own (maintainers; issue 26).

    make check-torch TORCH=2.15.0          # or: python3 tests/check_torch.py 2.15.0

Builds build/torch-<version>/venv (never .venv) with that torch, the grader and what its
tests import (pytest; no JupyterLab, no nbgrader), then, with that venv's Python:

- grades the blank release notebook (0 points) and the solutions (full marks and the bonus) through
  the command line, as a student's `make test` does;
- runs tests/e2e/test_catalog.py: every catalogued mistake caught in its own stage with its hint,
  every correct variant at full marks, the call policy's refusals (tests/catalog/);
- runs tests/unit.

One line per result (OK, FAIL or SKIP, with what was expected and what came), then the
install's size and seconds. Exits 1 on any FAIL, 2 when the install failed.

torch comes from --index-url (make passes TORCH_INDEX_URL: PyTorch's CPU index on Linux without
a GPU, see the Makefile; empty: pip's own configuration). The venv is kept and reused while its
torch is the one asked for; --fresh rebuilds it. Where pip's configuration caps torch below the
release (this project's machines), lift the cap for the run: PIP_CONFIG_FILE=/dev/null.
docs/maintainers-torch.md says when to run it and what it found.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RELEASE = REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb"
SOLUTION = REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
CATALOG = REPO / "tests" / "catalog"
# The course make release wrote (read as JSON: this script runs without the grader's packages).
COURSE = json.loads((REPO / "autograder" / "chapters" / "ch03_attention" / "course.json").read_text())["stages"]
TOTAL = sum(s["points"] for s in COURSE.values() if not s["bonus"])
BONUS = sum(s["points"] for s in COURSE.values() if s["bonus"])
# The extra the notebook imports (matplotlib) and the test runner; the catalog and the unit
# layer need nothing else (no nbformat, nbgrader or JupyterLab).
EXTRAS = "[notebook]"
TEST_TOOLS = ["pytest>=8"]

NESTED = "CHECK_TORCH_RUNNING"  # set for everything it starts

results: list[tuple[str, str, str, str]] = []  # status, what, expected, got


def report(status: str, what: str, expected: str, got: str) -> None:
    results.append((status, what, expected, got))
    print(f"{status:<4}  {what:<52} expected {expected:<44} got {got}", flush=True)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, text=True, capture_output=True, **kwargs)


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")


def folder_size(path: Path) -> int:
    """Bytes on disk (du -sk where there is one: hard links and sparse files counted as du does)."""
    du = shutil.which("du")
    if du:
        proc = subprocess.run([du, "-sk", str(path)], capture_output=True, text=True)
        if proc.returncode == 0:
            return int(proc.stdout.split()[0]) * 1024
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def gigabytes(n: int) -> str:
    return f"{n / 1e9:.2f} GB"


# --- the install --------------------------------------------------------------------------------

def install(version: str, folder: Path, index_url: str, fresh: bool) -> dict | None:
    """The venv with torch ``version`` and the grader; its record (seconds, size, versions)."""
    venv, record_file = folder / "venv", folder / "install.json"
    python = venv_python(venv)
    if not fresh and record_file.exists() and python.exists():
        record = json.loads(record_file.read_text())
        if record.get("torch", "").split("+")[0] == version:
            print(f"reusing {venv.relative_to(REPO)} (installed earlier in {record['seconds']:.0f} s; --fresh rebuilds it)")
            return record | {"reused": True}
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    log = folder / "install.log"
    index = ["--index-url", index_url] if index_url else []
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"]
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [*pip, "--upgrade", "pip"],
        # torch alone first (from the CPU index where there is one), then the grader beside it:
        # pip keeps that torch, which meets pyproject.toml's range.
        [*pip, f"torch=={version}", *index],
        [*pip, "-e", f"{REPO}{EXTRAS}", *TEST_TOOLS, f"torch=={version}"],
    ]
    print(f"installing torch {version} into {venv.relative_to(REPO)}"
          f" (torch from {index_url or 'pip configuration'}; log: {log.relative_to(REPO)})", flush=True)
    start = time.monotonic()
    with log.open("w") as out:
        for step in steps:
            out.write(f"$ {' '.join(step)}\n")
            out.flush()
            proc = subprocess.run(step, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, text=True)
            if proc.returncode != 0:
                print(f"FAIL  install: `{' '.join(step)}` exited {proc.returncode}; the end of {log}:")
                print("\n".join(log.read_text().splitlines()[-15:]))
                return None
    seconds = time.monotonic() - start
    versions = run([str(python), "-c", "import sys, torch, numpy; print(torch.__version__, numpy.__version__, "
                    "'%d.%d.%d' % sys.version_info[:3])"])
    if versions.returncode != 0:
        print(f"FAIL  install: import torch, numpy failed:\n{versions.stderr[-2000:]}")
        return None
    torch_version, numpy_version, python_version = versions.stdout.split()
    freeze = run([str(python), "-m", "pip", "freeze", "--exclude-editable"]).stdout.split()
    record = {"torch": torch_version, "numpy": numpy_version, "python": python_version, "seconds": seconds,
              "bytes": folder_size(venv), "index_url": index_url,
              "nvidia_packages": sorted(p.split("==")[0] for p in freeze if p.lower().startswith("nvidia")),
              "packages": freeze}
    record_file.write_text(json.dumps(record, indent=1))
    return record


# --- the checks ---------------------------------------------------------------------------------

def grade_notebook(python: Path, notebook: Path, folder: Path, score: float, bonus: float, code: int) -> None:
    results_file = folder / f"{notebook.parent.parent.name}.json"
    results_file.unlink(missing_ok=True)
    start = time.monotonic()
    proc = run([str(python), "-m", "autograder", str(notebook), "--results", str(results_file)],
               env={**os.environ, "COLUMNS": "200"}, timeout=1800)
    (folder / f"{notebook.parent.parent.name}.log").write_text(proc.stdout + proc.stderr)
    expected = f"{score:g}/{TOTAL:g} (+{bonus:g}/{BONUS:g} bonus), exit {code}"
    what = f"{notebook.relative_to(REPO)}"
    try:
        data = json.loads(results_file.read_text())
        got = f"{data['score']:g}/{TOTAL:g} (+{data['extra_data'].get('bonus_score', 0):g}/{BONUS:g} bonus), exit {proc.returncode}"
    except (OSError, ValueError, KeyError) as exc:
        got = f"no results ({exc}), exit {proc.returncode}"
    report("OK" if got == expected else "FAIL", what, expected, f"{got} in {time.monotonic() - start:.0f} s")
    warnings = [line for line in proc.stderr.splitlines() if "Warning" in line]
    for line in dict.fromkeys(warnings):
        print(f"      warning: {line.strip()[:160]}")


def _declared(path: Path) -> dict:
    tree = ast.parse(path.read_text())
    return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in ("STAGE", "HINT", "REFUSED")}


def _pytest(python: Path, folder: Path, name: str, args: list[str]) -> tuple[list[ET.Element], str, float]:
    """Run pytest in the venv; its test cases (junit XML) and its last line."""
    junit = folder / f"{name}.xml"
    junit.unlink(missing_ok=True)
    start = time.monotonic()
    proc = run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "junit_family=legacy", f"--junitxml={junit}", *args],
               env={**os.environ, "COLUMNS": "200"}, timeout=7200)
    (folder / f"{name}.log").write_text(proc.stdout + proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    last = lines[-1].strip("= ") if lines else f"pytest exited {proc.returncode}: {proc.stderr[-300:]}"
    cases = list(ET.parse(junit).getroot().iter("testcase")) if junit.exists() else []
    return cases, last, time.monotonic() - start


def _outcome(case: ET.Element) -> tuple[str, str]:
    for tag, status in (("failure", "FAIL"), ("error", "FAIL"), ("skipped", "SKIP")):
        found = case.find(tag)
        if found is not None:
            message = (found.get("message") or found.text or "").strip().splitlines()
            return status, (message[0] if message else tag)[:200]
    return "OK", ""


def check_catalog(python: Path, folder: Path) -> None:
    # The files' well-formedness is not torch's business: every grading and the policy are.
    cases, last, seconds = _pytest(python, folder, "catalog", ["tests/e2e/test_catalog.py", "-k", "not well_formed"])
    if not cases:
        report("FAIL", "tests/e2e/test_catalog.py", "the catalog graded", last)
        return
    for case in cases:
        name = case.get("name", "")
        entry = name[name.find("[") + 1:-1] if "[" in name else ""
        status, message = _outcome(case)
        if name.startswith("test_mistake_is_caught_with_its_hint"):
            declared = _declared(CATALOG / "mistakes" / f"{entry}.py")
            what, expected = f"mistake {entry}", f"stage {declared.get('STAGE')} loses, hint: {declared.get('HINT')!r}"[:44]
            got = "caught, its hint, no other stage charged" if status == "OK" else message
        elif name.startswith("test_correct_variant_gets_full_marks"):
            full = f"{TOTAL:g}/{TOTAL:g}"
            what, expected, got = f"correct {entry}", full, full if status == "OK" else message
        elif name.startswith("test_the_call_policy"):
            declared = _declared(CATALOG / "policy" / f"{entry}.py")
            what = f"policy {entry}"
            expected = f"refused in {declared.get('REFUSED')}, relaxed full"
            got = "refused there only; relaxed: full marks" if status == "OK" else message
        else:
            what, expected, got = name, "passes", "passes" if status == "OK" else message
        report(status, what, expected, got)
    report("OK" if all(_outcome(c)[0] != "FAIL" for c in cases) else "FAIL", "tests/e2e/test_catalog.py (summary)",
           "no failure", f"{last} in {seconds:.0f} s")


def check_unit(python: Path, folder: Path) -> None:
    cases, last, seconds = _pytest(python, folder, "unit", ["tests/unit"])
    failed = [(case, _outcome(case)) for case in cases if _outcome(case)[0] == "FAIL"]
    for case, (_, message) in failed:
        report("FAIL", f"unit {case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"[:52], "passes", message)
    report("OK" if cases and not failed else "FAIL", "tests/unit", "no failure", f"{last} in {seconds:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("version", help="the torch release, e.g. 2.15.0")
    parser.add_argument("--index-url", default="", help="install torch from this index (empty: pip's configuration)")
    parser.add_argument("--fresh", action="store_true", help="rebuild the venv even when it holds that torch")
    parser.add_argument("--only", choices=["notebooks", "catalog", "unit"], action="append",
                        help="run only these checks (repeatable; default: all)")
    args = parser.parse_args(argv)
    if os.environ.get(NESTED):  # a test under check-torch that starts check-torch again
        print(f"check_torch.py runs inside check_torch.py ({NESTED} is set): refused")
        return 2
    os.environ[NESTED] = args.version
    folder = REPO / "build" / f"torch-{args.version}"
    total = time.monotonic()
    record = install(args.version, folder, args.index_url, args.fresh)
    if record is None:
        return 2
    python = venv_python(folder / "venv")
    print(f"torch {record['torch']}, numpy {record['numpy']}, Python {record['python']}"
          f"{', CUDA packages: ' + str(len(record['nvidia_packages'])) if record['nvidia_packages'] else ''}", flush=True)
    only = set(args.only or ["notebooks", "catalog", "unit"])
    if "notebooks" in only:
        grade_notebook(python, RELEASE, folder, 0, 0, 1)
        grade_notebook(python, SOLUTION, folder, TOTAL, BONUS, 0)
    if "catalog" in only:
        check_catalog(python, folder)
    if "unit" in only:
        check_unit(python, folder)
    failed = sum(status == "FAIL" for status, *_ in results)
    ok = sum(status == "OK" for status, *_ in results)
    skipped = sum(status == "SKIP" for status, *_ in results)
    print(f"\ntorch {record['torch']}: {ok} OK, {failed} FAIL, {skipped} SKIP; checks {time.monotonic() - total:.0f} s")
    print(f"install: {gigabytes(record['bytes'])} ({folder.relative_to(REPO)}/venv, du), "
          f"{record['seconds']:.0f} s{' (earlier run; reused now)' if record.get('reused') else ''}, "
          f"torch from {record['index_url'] or 'pip configuration'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
