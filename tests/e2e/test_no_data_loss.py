"""No command of the project deletes or overwrites what a person made: a mistyped output path
is refused with a clear message and left as it was, `make clean` spares grading/, a failed
atomic write leaves no temporary file, and a submission that replaced its own file is put
back without deleting what took its place."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

STUB = "def softmax_naive(x):\n    raise NotImplementedError\n"


def _grade(tmp_path: Path, module: str, *args: str) -> subprocess.CompletedProcess:
    submission = tmp_path / "submission.py"
    submission.write_text(STUB)
    return subprocess.run([sys.executable, "-m", *module.split(), str(submission), "--stage", "1", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def _folder_with_work(path: Path) -> dict[str, bytes]:
    (path / "submitted" / "alice").mkdir(parents=True)
    (path / "gradebook.db").write_bytes(b"SQLite format 3\0 the instructor's grades")
    (path / "submitted" / "alice" / "ch03_attention.ipynb").write_text('{"cells": []}')
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _contents(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("module", ["autograder", "autograder ci"])
def test_results_naming_a_folder_is_refused_and_the_folder_kept(tmp_path, module):
    grading = tmp_path / "grading"
    before = _folder_with_work(grading)
    run = _grade(tmp_path, module, "--results", str(grading))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "is a folder" in run.stderr and "Traceback" not in run.stderr
    assert grading.is_dir() and _contents(grading) == before


@pytest.mark.parametrize("module", ["autograder", "autograder ci"])
def test_results_naming_a_file_that_is_not_a_results_file_is_refused(tmp_path, module):
    notebook = tmp_path / "my_work.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    before = notebook.read_bytes()
    run = _grade(tmp_path, module, "--results", str(notebook))
    assert run.returncode == 2 and "not written by this grader" in run.stderr, run.stderr
    assert notebook.read_bytes() == before


def test_an_earlier_results_file_is_replaced(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"score": 100, "tests": []}))
    run = _grade(tmp_path, "autograder", "--results", str(results))
    assert run.returncode == 1, run.stderr
    assert json.loads(results.read_text())["score"] == 0


def test_junit_naming_a_folder_is_refused_but_the_grade_is_still_reported(tmp_path):
    reports = tmp_path / "reports"
    before = _folder_with_work(reports)
    run = _grade(tmp_path, "autograder ci", "--results", str(tmp_path / "results.json"),
                 "--junit", str(reports))
    assert run.returncode == 2 and "--junit" in run.stderr and "is a folder" in run.stderr
    assert "::notice title=Grade::0/" in run.stdout  # the grade still reaches the run's page
    assert _contents(reports) == before


def test_make_clean_removes_the_build_and_keeps_grading(tmp_path):
    for name in ("Makefile", "students.mk"):
        shutil.copy(REPO / name, tmp_path)
    (tmp_path / "autograder").mkdir()
    (tmp_path / "tests").mkdir()
    for made in (".venv/bin", "build/ci", ".pytest_cache", ".hypothesis", "autograder/__pycache__"):
        (tmp_path / made).mkdir(parents=True)
        (tmp_path / made / "file").write_text("made by the build")
    before = _folder_with_work(tmp_path / "grading")
    subprocess.run(["make", "-s", "clean"], cwd=tmp_path, check=True, capture_output=True)
    for made in (".venv", "build", ".pytest_cache", ".hypothesis", "autograder/__pycache__"):
        assert not (tmp_path / made).exists(), made
    assert _contents(tmp_path / "grading") == before
