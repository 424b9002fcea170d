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
