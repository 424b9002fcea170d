"""The grader's speed budget: ``make test`` on a correct notebook against a bare ``import torch``
and against ``nbgrader validate`` (``make bench-grader``, through :mod:`.bench`).

It only measures: nothing here decides a grade.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the checkout


# -- the grader's speed budget ---------------------------------------------------------------

def _seconds(command: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise SystemExit(f"`{' '.join(command)}` failed with exit status {proc.returncode}:\n" + "\n".join(tail))
    return seconds


def bench_grader(notebook: Path, repeat: int) -> dict[str, float]:
    """Median wall-clock seconds of the three commands, run in turns ``repeat`` times."""
    python = Path(sys.executable)
    bin_dir = python.parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # nbgrader runs alembic
    env.pop("MAKEFLAGS", None)  # the inner make must not inherit -s/-j from `make bench-grader`
    commands = {
        "bare `python -c 'import torch'`": [str(python), "-c", "import torch"],
        "`make test` (the full grade)": [os.environ.get("MAKE", "make"), "--no-print-directory", "-s", "test",
                                         f"NOTEBOOK={notebook}"],
        "`nbgrader validate`": [str(bin_dir / "nbgrader"), "validate", str(notebook)],
    }
    _seconds(commands["bare `python -c 'import torch'`"], env)  # warm the file cache once
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            times[name].append(_seconds(command, env))
    return {name: statistics.median(values) for name, values in times.items()} | {
        f"{name} (all runs)": values for name, values in times.items()}


def print_grader(notebook: Path, repeat: int) -> None:
    print(f"Timing {notebook.relative_to(REPO) if notebook.is_relative_to(REPO) else notebook}: "
          f"median of {repeat} runs each, on {os.cpu_count()} CPU core(s)", flush=True)
    result = bench_grader(notebook, repeat)
    torch_s = result["bare `python -c 'import torch'`"]
    grade_s = result["`make test` (the full grade)"]
    validate_s = result["`nbgrader validate`"]
    width = max(len(n) for n in result if "(all runs)" not in n)
    for name in ("bare `python -c 'import torch'`", "`make test` (the full grade)", "`nbgrader validate`"):
        runs = ", ".join(f"{s:.2f}" for s in result[f"{name} (all runs)"])
        print(f"  {name:<{width}}  {result[name]:6.2f} s   (runs: {runs})")
    print(f"  full grade / torch import      = {grade_s / torch_s:.2f}   (goal: at most 4)")
    print(f"  full grade / nbgrader validate = {grade_s / validate_s:.2f}   (goal: below 1)")
