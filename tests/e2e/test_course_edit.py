"""Issue 44: the tests follow the course. The customize page's edits (docs/instructors/customize.md:
stage 1 to 5 points, stage 7 to 15, the bonus section deleted) on a copy of this repository, then
make release's course step there; the tests that depend on the course's points, total and bonus
run in the copy and pass, because they read the course instead of this one's numbers.

The whole check on such a copy (make check-fast and make check-course, with nbgrader's release)
is described in docs/maintainers.md, "CI"; this one runs in seconds and keeps the tests that once
quoted the numbers from quoting them again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

from autograder.chapters.ch03_attention import CHAPTER

EDIT = {1: 5, 7: 15}  # stage -> points, as the customize page's example
# The tests that once quoted a stage's points, the total or the bonus (each file, or the test).
FOLLOWING = [
    "tests/unit/frontends/test_notebook.py",
    "tests/unit/frontends/test_course.py",
    "tests/unit/frontends/test_reports.py",
    "tests/unit/core/test_results.py",
    "tests/unit/chapters/test_ch03_attention.py",
    "tests/unit/test_docs.py::test_the_facts_are_found_in_the_docs",
    "tests/unit/test_docs.py::test_the_facts_are_what_the_code_says",
    "tests/unit/test_docs.py::test_quoted_numbers_are_the_codes",
    "tests/e2e/test_foundation.py::test_notebook_follows_the_stages",
    "tests/e2e/test_foundation.py::test_one_stage_only",
    "tests/e2e/test_nbgrader.py::test_hidden_tests_catch_a_submission_fitted_to_the_visible_examples",
]
LEFT_OUT = shutil.ignore_patterns(".git", ".venv", "build", "grading", "__pycache__", ".pytest_cache", ".hypothesis",
                                  ".ruff_cache")


def plant_the_edit(source: Path) -> None:
    """The customize page's recipe on the source notebook: new points in the test cells' nbgrader
    metadata, and the bonus section (its heading through its test cell) deleted."""
    bonus = next(s for s in CHAPTER.stages if s.bonus)
    notebook = json.loads(source.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    grade_ids = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in cells]
    start = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(f"## {bonus.label}"))
    del cells[start:grade_ids.index(bonus.grade_id) + 1]
    declared = {s.number: s for s in CHAPTER.declared_stages}
    for cell in cells:
        grade = cell["metadata"].get("nbgrader", {})
        for number, points in EDIT.items():
            if grade.get("grade_id") == declared[number].grade_id:
                grade["points"] = points
    source.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_the_points_dependent_tests_follow_an_instructors_edit(tmp_path):
    if not any(s.bonus for s in CHAPTER.stages):
        pytest.skip("the course has no bonus section to delete: the edit was made already")
    course = tmp_path / "course"
    shutil.copytree(REPO, course, ignore=LEFT_OUT)
    plant_the_edit(CHAPTER.source_notebook(course))
    # the copy's own grader and tests, whichever checkout the venv was installed from
    env = {**os.environ, "PYTHONPATH": str(course), "COLUMNS": "200"}
    released = subprocess.run([sys.executable, "-m", "autograder", "release", "--course-only", "--chapter", CHAPTER.id], cwd=course,
                              capture_output=True, text=True, timeout=120, env=env)
    assert released.returncode == 0, released.stdout + released.stderr
    written = json.loads((course / CHAPTER.course_path.relative_to(REPO)).read_text())["stages"]
    assert {int(n): s["points"] for n, s in written.items() if int(n) in EDIT} == EDIT
    assert not any(s["bonus"] for s in written.values()) and "(no bonus)" in released.stdout
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *FOLLOWING],
                          cwd=course, capture_output=True, text=True, timeout=600, env=env)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said[-6000:]
    # the test that needs a bonus section says why it did not run
    assert "the course has no bonus stage" in said, said[-3000:]
