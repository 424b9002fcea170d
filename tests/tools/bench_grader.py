"""``make bench-grader``: ``make test`` on a full-marks notebook against a bare ``import torch``
and ``nbgrader validate``, run in turns so that a busy machine slows all alike; where ``make
test``'s time goes (``AUTOGRADER_TIMINGS``, :mod:`autograder.sandbox.timings`); and a notebook
test cell on one wrong stage of each of stages 2 to 7.

    .venv/bin/python tests/tools/bench_grader.py [--notebook NB] [--repeat 3] [--no-validate] [--no-test-cells]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
GOAL = 2.5  # make test within this many bare torch imports (issue 36)
TORCH = "bare `python -c 'import torch'`"
GRADE = "`make test` (the full grade)"
VALIDATE = "`nbgrader validate`"


def _load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except (AttributeError, OSError):
        return "load average unknown"
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min)"


def _cpu_of_children() -> float:
    spent = os.times()
    return spent.children_user + spent.children_system


def _run(command: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of it and its children, the moment it started)."""
    cpu, started = _cpu_of_children(), time.monotonic()
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise SystemExit(f"`{' '.join(command)}` failed with exit status {proc.returncode}:\n" + "\n".join(tail))
    return seconds, _cpu_of_children() - cpu, started


def bench_grader(notebook: Path, repeat: int, validate: bool = True) -> dict:
    """Each command's median wall seconds (``name``), every run's (``name (all runs)``), its median
    CPU seconds (``name (cpu)``), and ``"timings"``: each make test's notes, relative to its start."""
    python = Path(sys.executable)
    env = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # nbgrader runs alembic
    env.pop("MAKEFLAGS", None)  # the inner make must not inherit -s/-j
    commands = {TORCH: [str(python), "-c", "import torch"],
                GRADE: [os.environ.get("MAKE", "make"), "--no-print-directory", "-s", "test", f"NOTEBOOK={notebook}"]}
    if validate:
        commands[VALIDATE] = [str(python.parent / "nbgrader"), "validate", str(notebook)]
    _run(commands[TORCH], env)  # warm the file cache once
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-grader-") as folder:
        notes = Path(folder) / "timings.json"
        for _ in range(repeat):
            for name, command in commands.items():
                notes.unlink(missing_ok=True)
                wall, cpu, started = _run(command, {**env, "AUTOGRADER_TIMINGS": str(notes)} if name == GRADE else env)
                walls[name].append(wall)
                cpus[name].append(cpu)
                if name == GRADE:
                    found = json.loads(notes.read_text())
                    runs.append({"marks": {k: at - started for k, at in found.get("marks", {}).items()},
                                 "totals": found.get("totals", {}), "stages": found.get("stages", []),
                                 "wall": wall, "cpu": cpu})
    return {name: statistics.median(values) for name, values in walls.items()} | {
        f"{name} (all runs)": values for name, values in walls.items()} | {
        f"{name} (cpu)": statistics.median(values) for name, values in cpus.items()} | {"timings": runs}


def _median(runs: list[dict], get) -> float | None:
    values = []
    for run in runs:
        try:
            value = get(run)
        except (KeyError, TypeError, IndexError):
            continue
        if value is not None:
            values.append(value)
    return statistics.median(values) if values else None


BREAKDOWN = [  # (words, the mark the phase ends at, the marks it spans)
    ("the grader's first line (Python's start-up, and make's)", "grader_started", None),
    ("grader: torch imported, the workers' server forked from it", "fork_server", ("grader_started", "fork_server")),
    ("grader: the checks, hypothesis and the report imported", "grader_modules", ("fork_server", "grader_modules")),
    ("grader: its preloads run (while the worker starts)", "preloads_done", ("grader_modules", "preloads_done")),
    ("grader: the worker's ready read", "worker_ready", None),
    ("notebook sent (the grader's imports all done)", "notebook_sent", None),
    ("notebook's cells run in the worker", "notebook_loaded", ("notebook_sent", "notebook_loaded")),
    ("every stage graded", "graded", ("notebook_loaded", "graded")),
    ("report printed", "printed", ("graded", "printed")),
    ("worker closed, grader's process ends", "end", ("printed", "end")),
]


def breakdown_lines(runs: list[dict]) -> list[str]:
    """Where ``make test``'s time went: the medians over ``runs`` (:func:`bench_grader`'s timings)."""
    def total(name):
        return _median(runs, lambda r: r["totals"].get(name, 0.0))

    def fmt(value) -> str:
        return "   ?  " if value is None else f"{value:6.2f}"

    lines = [f"Where `make test`'s time goes (median of {len(runs)} run(s); the moment each phase ended, in seconds "
             "from the start of `make test`, and how long it took):"]
    for words, name, span in BREAKDOWN:
        took = ""
        if span:
            took = f"  ({fmt(_median(runs, lambda r, a=span[0], b=span[1]: r['marks'][b] - r['marks'][a])).strip()} s)"
        lines.append(f"  {words:<60} {fmt(_median(runs, lambda r, n=name: r['marks'][n]))}{took}")
    exit_words = "Python's exit and make's, after the grader's last note"
    lines.append(f"  {exit_words:<60} {'':6}  ({fmt(_median(runs, lambda r: r['wall'] - r['marks']['end'])).strip()} s)")
    lines.append(f"  {'whole `make test` (wall clock)':<60} {fmt(_median(runs, lambda r: r['wall']))}"
                 f"  (CPU of all its processes {fmt(_median(runs, lambda r: r['cpu'])).strip()} s)")
    # each stage is found by its id
    order = [s["id"] for s in runs[0]["stages"]] if runs and runs[0].get("stages") else []
    lines.append("  the stages, in the order the first run graded them (seconds; "
                 "round trips to the worker and the seconds waiting on them; hypothesis properties/examples):")
    for stage_id in order:
        def of(key, stage_id=stage_id):
            return _median(runs, lambda r: next((s.get(key) for s in r["stages"] if s["id"] == stage_id), None))
        lines.append(f"    {stage_id:<16} {fmt(of('seconds'))} s   {of('round_trips') or 0:5.0f} round trips "
                     f"{fmt(of('round_trip_seconds')).strip():>6} s   {of('properties') or 0:3.0f} properties "
                     f"{of('examples') or 0:4.0f} examples")
    trips, waiting = total("round_trips"), total("round_trip_seconds")
    per = f" ({1000 * waiting / trips:.1f} ms each)" if trips and waiting is not None else ""
    lines.append(f"  all stages: {trips or 0:,.0f} round trips, {fmt(waiting).strip()} s waiting on the worker{per}; "
                 f"{total('properties') or 0:.0f} properties, {total('examples') or 0:.0f} examples, "
                 f"{fmt(total('property_seconds')).strip()} s inside hypothesis's properties; forking the stages' "
                 f"copies {fmt(total('fork_seconds')).strip()} s, ending them {fmt(total('end_stage_seconds')).strip()} s")
    return lines


def print_grader(notebook: Path, repeat: int, validate: bool = True, test_cells: bool = True) -> None:
    print(f"Timing {notebook.relative_to(REPO) if notebook.is_relative_to(REPO) else notebook}: "
          f"median of {repeat} runs each, in turns, on {os.cpu_count()} CPU core(s), {_load()}", flush=True)
    result = bench_grader(notebook, repeat, validate)
    print(f"  (at the end, {_load()})")
    names = [TORCH, GRADE] + ([VALIDATE] if validate else [])
    width = max(len(n) for n in names)
    for name in names:
        runs = ", ".join(f"{s:.2f}" for s in result[f"{name} (all runs)"])
        print(f"  {name:<{width}}  {result[name]:6.2f} s  CPU {result[f'{name} (cpu)']:5.2f} s   (runs: {runs})")
    ratio = result[GRADE] / result[TORCH]
    print(f"  full grade / torch import      = {ratio:.2f}   (goal: at most {GOAL:g}: {'met' if ratio <= GOAL else 'NOT met'})")
    if validate:
        print(f"  full grade / nbgrader validate = {result[GRADE] / result[VALIDATE]:.2f}   (goal: below 1)")
    print()
    print("\n".join(breakdown_lines(result["timings"])))
    if test_cells:
        print(flush=True)
        print_test_cells(repeat)


CATALOG = REPO / "tests" / "catalog"
# one wrong submission per stage 2-7 from the mistake catalog, pasted after a correct notebook's
# code as the catalog's test grades it; sixty-four heads runs 64-head attention at 1024 tokens
WRONG_STAGES = ("s2_scores_one_query", "s3_v2_no_scale", "s4_weights_values_swapped", "s4_dropout_on_scores",
                "s5_settings_not_passed", "s6_head_dim_true_division", "s7_eight_heads", "s7_sixty_four_heads")
TEST_CELL_GOAL = 1.0  # seconds for a wrong stage's test cell (issue 36)


def time_test_cells(names=WRONG_STAGES, repeat: int = 3) -> list[tuple[str, int, float, float, list[float]]]:
    """Each wrong stage's test cell graded in this process as the kernel grades it: (name, stage,
    points, the first run's seconds, the next ``repeat`` runs' seconds)."""
    import ast
    import contextlib
    import io

    from autograder.chapters.ch03_attention import CHAPTER
    from autograder.core.engine import run_in_kernel

    base = (CATALOG / "correct" / "book_style.py").read_text()
    rows = []
    for name in names:
        path = CATALOG / "mistakes" / f"{name}.py"
        source = path.read_text()
        stage = next(node.value.value for node in ast.parse(source).body if isinstance(node, ast.Assign)
                     and getattr(node.targets[0], "id", "") == "STAGE")
        namespace = {"__name__": "__main__"}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(base + "\n" + source, str(path), "exec"), namespace)  # noqa: S102 - the course's own catalog
        seconds = []
        for _ in range(repeat + 1):
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                points = run_in_kernel(CHAPTER, CHAPTER.stage(stage), namespace).score
            seconds.append(time.perf_counter() - started)
        rows.append((name, stage, float(points), seconds[0], seconds[1:]))
    return rows


def print_test_cells(repeat: int) -> None:
    print(f"A notebook test cell on a wrong stage (graded in this process, as the kernel grades it; the first run, "
          f"then the median of {repeat} more; goal: within {TEST_CELL_GOAL:g} s):")
    rows = time_test_cells(repeat=repeat)
    width = max(len(name) for name, *_ in rows)
    for name, stage, points, first, again in rows:
        median = statistics.median(again)
        print(f"  {name:<{width}}  stage {stage}  {points:4.1f} points  first {first:5.2f} s  then {median:5.2f} s"
              f"  {'' if median <= TEST_CELL_GOAL else '(over the goal)'}")
    within = sum(statistics.median(again) <= TEST_CELL_GOAL for *_, again in rows)
    print(f"  {within} of {len(rows)} within {TEST_CELL_GOAL:g} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="make test vs import torch vs nbgrader validate")
    parser.add_argument("--notebook", type=Path, default=REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb",
                        help="a notebook that earns full marks")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (median reported)")
    parser.add_argument("--no-validate", action="store_true", help="leave nbgrader validate out (11 s a run)")
    parser.add_argument("--no-test-cells", action="store_true", help="leave out the test cells on wrong stages")
    args = parser.parse_args(argv)
    print_grader(args.notebook.resolve(), args.repeat, validate=not args.no_validate, test_cells=not args.no_test_cells)
    return 0


if __name__ == "__main__":
    sys.exit(main())
