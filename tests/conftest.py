"""Shared fixtures. Every test runs from the repository root with the installed package."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOLUTION = REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
RELEASE = REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb"


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    results: dict | None


def link_venv(course: Path, venv: Path | None = None) -> None:
    """``venv`` (default: this test's) as ``course/.venv``, where the Makefile looks by default.
    Make cannot take a path with spaces as VENV (its rules name the venv's stamp files), and a
    checkout under "My Courses (2027)/..." would hand it one."""
    link = course / ".venv"
    if not link.exists():
        link.symlink_to(venv or Path(sys.executable).parent.parent, target_is_directory=True)


def run_grader(submission: Path, tmp_path: Path, *args: str, timeout: float = 600) -> CliRun:
    """Grade through the real command line, as a student or CI would."""
    results = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", str(submission), "--results", str(results), *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    data = json.loads(results.read_text()) if results.exists() else None
    return CliRun(proc.returncode, proc.stdout, proc.stderr, data)


@pytest.fixture(scope="session")
def graded_solution(tmp_path_factory) -> CliRun:
    return run_grader(SOLUTION, tmp_path_factory.mktemp("solution"))


@pytest.fixture(scope="session")
def graded_release(tmp_path_factory) -> CliRun:
    return run_grader(RELEASE, tmp_path_factory.mktemp("release"))


# -- the mistake catalog's figure (tests/test_catalog.py) ----------------------------------
def pytest_terminal_summary(terminalreporter):
    """One line each for the catalog's mistakes and correct variants, read from the
    properties test_catalog.py records (they survive pytest-xdist too)."""
    entries = [dict(report.user_properties) for outcome in ("passed", "failed")
               for report in terminalreporter.stats.get(outcome, []) if getattr(report, "when", "") == "call"]
    mistakes = [e for e in entries if e.get("catalog") == "mistake"]
    correct = [e for e in entries if e.get("catalog") == "correct"]
    if mistakes:
        caught = sum(bool(e.get("caught")) for e in mistakes)
        terminalreporter.write_line(f"mistake catalog: {caught}/{len(mistakes)} caught in their own stage "
                                    "with their hint")
    if correct:
        full = sum(bool(e.get("full_marks")) for e in correct)
        terminalreporter.write_line(f"correct variants: {full}/{len(correct)} graded 100/100")
