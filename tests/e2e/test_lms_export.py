"""make export LMS_ROSTER=... BONUS=...: the Makefile's variables reach nbgrader's export (one
graded student in a gradebook built with nbgrader's API, no notebook run), and a roster that
cannot be read is a one-line message, never a traceback. The files' contents:
tests/with_nbgrader/test_nbgrader_export.py; a whole class: tests/e2e/test_instructor_class.py."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import REPO, SOLUTION, link_venv

api = pytest.importorskip("nbgrader.api", reason="nbgrader is not installed (make check-torch grades without it)")
from autograder.chapters.ch03_attention import CHAPTER  # noqa: E402
from autograder.frontends.instructors.nbgrader.plugins import extra_credit_cell  # noqa: E402

# nbgrader's add_submission builds its rows before adding them to the session
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
A = CHAPTER.id
BONUS = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)


def _make(course: Path, *args: str) -> subprocess.CompletedProcess:
    link_venv(course)
    # this checkout's autograder, whichever one the venv was installed from
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")} | {"PYTHONPATH": str(REPO)}
    return subprocess.run(["make", "--no-print-directory", *args, f"STAMP={course / '.stamp'}"], cwd=course,
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture
def course(gradebook_url, tmp_path) -> Path:
    course = tmp_path / "course"
    (course / "grading").mkdir(parents=True)
    for name in ("Makefile", "students.mk", "nbgrader_config.py", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, course / name)
    (course / "solutions" / A).mkdir(parents=True)
    shutil.copy(SOLUTION, course / "solutions" / A / f"{A}.ipynb")
    (course / ".stamp").touch()  # the environment is this test's; make must not install one
    with api.Gradebook(gradebook_url) as gb:
        gb.add_assignment(A)
        gb.add_notebook(A, A)
        for stage in (s for s in CHAPTER.stages if not s.bonus):
            gb.add_grade_cell(stage.grade_id, A, A, max_score=CHAPTER.points(stage), cell_type="code")
        gb.add_student("ada")
        gb.add_submission(A, "ada")
        for grade in gb.find_submission_notebook(A, A, "ada").grades:
            grade.auto_score = grade.max_score
            grade.extra_credit = BONUS if grade.name == extra_credit_cell(CHAPTER) else None
        gb.db.commit()
    # newer than the source notebook: make export uses it as it is
    shutil.copy(gradebook_url.removeprefix("sqlite:///"), course / "grading" / "gradebook.db")
    return course


def test_make_export_with_a_roster_and_a_bonus_place(course):
    (course / "canvas export.csv").write_text(f"Student,ID,SIS User ID,SIS Login ID,Section,{A}\n"
                                              '    Points Possible,,,,,100\n"Lovelace, Ada",7,,ada,\n"Hopper, Grace",8,,ghopper,\n')
    done = _make(course, "export", "LMS_ROSTER=canvas export.csv", "BONUS=inside")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["grading/grades.csv", "grading/canvas-grades.csv", "grading/lms-missing.csv"]
    with open(course / "grading" / "canvas-grades.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A],
                    ["Lovelace, Ada", "7", "", "ada", "", f"{CHAPTER.max_score + BONUS:g}"], ["Hopper, Grace", "8", "", "ghopper", "", "0"]]


def test_make_export_refuses_a_missing_roster_in_one_line(course):
    done = _make(course, "export", "LMS_ROSTER=class.csv")
    assert done.returncode != 0
    assert "cannot read the roster class.csv" in done.stderr and "Traceback" not in done.stdout + done.stderr
    assert not (course / "grading" / "grades.csv").exists()
