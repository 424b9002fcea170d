"""``make bench-grader``: ``make test`` on a full-marks notebook against a bare ``import torch``
and ``nbgrader validate``, run in turns so that a busy machine slows all alike; and a notebook
test cell on one wrong stage of each of stages 2 to 7.

    .venv/bin/python tests/tools/bench_grader.py [--notebook NB] [--repeat 3] [--no-validate] [--no-test-cells]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
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


def _run(command: list[str], env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of it and its children)."""
    cpu, started = _cpu_of_children(), time.monotonic()
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise SystemExit(f"`{' '.join(command)}` failed with exit status {proc.returncode}:\n" + "\n".join(tail))
    return seconds, _cpu_of_children() - cpu


def bench_grader(notebook: Path, repeat: int, validate: bool = True) -> dict:
    """Each command's median wall seconds (``name``), every run's (``name (all runs)``) and its median
    CPU seconds (``name (cpu)``)."""
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
    for _ in range(repeat):
        for name, command in commands.items():
            wall, cpu = _run(command, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: statistics.median(values) for name, values in walls.items()} | {
        f"{name} (all runs)": values for name, values in walls.items()} | {
        f"{name} (cpu)": statistics.median(values) for name, values in cpus.items()}


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
