"""A course folder of simulated submissions (:mod:`autograder.frontends.maintainers.simulated_class`)
for the tests, the class benchmark and the screenshots, and what nbgrader recorded in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from autograder.frontends.maintainers.simulated_class import (  # noqa: E402
    ASSIGNMENT,
    MISTAKES,
    SimulatedStudent,
    copy_course,
    release_and_solution,
    write_submission,
)

# The mix of make_class: full marks, untouched, part done, each known mistake, one cell broken.
KINDS: list[tuple[str, dict]] = [
    ("perfect", {}), ("blank", {"done": frozenset()}), ("stages1to4", {"done": frozenset({1, 2, 3, 4})}),
    *[(f"mistake{n}", {"mistake": n}) for n in MISTAKES], ("broken2", {"broken": 2})]


def make_class(size: int) -> list[SimulatedStudent]:
    """``size`` students, :data:`KINDS` in turn."""
    return [SimulatedStudent(f"s{i:02d}_{KINDS[i % len(KINDS)][0]}", **KINDS[i % len(KINDS)][1]) for i in range(size)]


def class_of(size: int) -> dict[str, dict]:
    """Student id -> notebook, for :func:`make_class`'s students."""
    release, solution = release_and_solution()
    return {student.id: student.notebook(release, solution) for student in make_class(size)}


def new_course(root: Path, submissions: dict[str, dict] | list[SimulatedStudent]) -> None:
    """A released course folder holding these submissions (notebooks by id, or simulated students)."""
    copy_course(root)
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    if isinstance(submissions, dict):
        for student, notebook in submissions.items():
            write_submission(root, student, notebook)
        return
    release, solution = release_and_solution()
    for student in submissions:
        write_submission(root, student.id, student.notebook(release, solution), student.notebook_name, student.timestamp)


def nbgrader_env() -> dict:
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs alembic from PATH
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-m", "nbgrader", *args, "--log-level=ERROR"], cwd=root,
                          env=nbgrader_env(), capture_output=True, text=True, check=True)


def gradebook_rows(root: Path, assignment: str = ASSIGNMENT) -> dict[tuple, tuple]:
    """What autograde wrote to a course's gradebook, read back through nbgrader's API."""
    from nbgrader.api import Gradebook

    rows = {}
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}") as gb:
        for submission in gb.find_assignment(assignment).submissions:
            student = submission.student.id
            rows[(student,)] = (str(submission.timestamp), submission.late_submission_penalty)
            for nb in submission.notebooks:
                for grade in nb.grades:
                    rows[(student, nb.name, grade.name)] = (grade.auto_score, grade.manual_score, grade.max_score,
                                                            grade.needs_manual_grade)
                for comment in nb.comments:
                    rows[(student, nb.name, comment.name, "comment")] = (comment.auto_comment, comment.manual_comment)
    return rows


def total_scores(rows: dict[tuple, tuple]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for key, value in rows.items():
        if len(key) == 3:
            totals[key[0]] = totals.get(key[0], 0.0) + (value[1] if value[1] is not None else value[0] or 0.0)
    return totals
