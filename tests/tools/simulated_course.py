"""Simulated students and a course folder that holds their submissions, for make demo, the tests,
the class benchmark and the screenshots, and what nbgrader recorded in it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder import CHECKOUT as REPO
from autograder.chapters import DEFAULT, load

ASSIGNMENT = DEFAULT  # the nbgrader assignment id is the chapter id
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*\n", re.MULTILINE)

# Known mistakes that cost points in their own stage only (a wrong CausalAttention would also
# break the wrapper of stage 5, a wrong MultiHeadAttention the GPT-2 module of stage 7).
MISTAKES = {
    1: ("exp_x.sum(dim=-1, keepdim=True)", "exp_x.sum(dim=0, keepdim=True)"),        # wrong axis
    2: ("return attn_weights @ inputs", "return attn_weights.T @ inputs"),          # transposed weights
    3: ("attn_scores / math.sqrt(keys.shape[-1])", "attn_scores"),                   # no scaling
}

# The mistake the grader names for each of MISTAKES (the class report's counts are checked against them).
MISTAKE_IDS = {1: "sum_dim_0", 2: "transposed_weights", 3: "no_scale"}


def student_notebook(release: dict, solution: dict, *, done: Iterable[int] | None = None,
                     mistake: int | Iterable[int] | None = None, broken: int | None = None) -> dict:
    """The release with stages ``done`` solved, a known mistake in each of ``mistake``, stage ``broken`` unparsable."""
    mistakes = {mistake} if isinstance(mistake, int) else set(mistake or ())
    answers = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in solution["cells"]
               if c["metadata"].get("nbgrader", {}).get("solution")}
    notebook = json.loads(json.dumps(release))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        match = re.fullmatch(r"stage(\d+)_\w+_solution", grade_id)
        if not match or (done is not None and int(match.group(1)) not in done):
            continue
        number = int(match.group(1))
        source = SOLUTION_MARKERS.sub("", answers[grade_id])
        if number in mistakes:
            right, wrong = MISTAKES[number]
            assert right in source, (number, right)
            source = source.replace(right, wrong)
        if number == broken:
            source = source.replace("):\n", ")\n", 1)  # a missing colon: the whole cell fails to compile
        cell["source"] = source
    return notebook


def release_and_solution() -> tuple[dict, dict]:
    chapter = load(ASSIGNMENT)
    return (json.loads(chapter.release_notebook(REPO).read_text()),
            json.loads(chapter.source_notebook(REPO).read_text()))


@dataclass(frozen=True)
class SimulatedStudent:
    """A simulated student, the notebook's name if renamed, and its timestamp.txt."""

    id: str
    done: frozenset[int] | None = None
    mistake: int | frozenset[int] | None = None
    broken: int | None = None
    notebook_name: str | None = None
    timestamp: str | None = None

    def notebook(self, release: dict, solution: dict) -> dict:
        return student_notebook(release, solution, done=self.done, mistake=self.mistake, broken=self.broken)


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


def copy_course(root: Path) -> None:
    """A new course folder like the repository's: the sources, nbgrader_config.py, grading/."""
    root.mkdir(parents=True)
    shutil.copytree(REPO / "solutions", root / "solutions", ignore=shutil.ignore_patterns(".*"))
    shutil.copy(REPO / "nbgrader_config.py", root)
    (root / "grading").mkdir()


def write_submission(root: Path, student: str, notebook: dict, name: str | None = None,
                     timestamp: str | None = None) -> Path:
    """``notebook`` in nbgrader's layout, with ``timestamp.txt`` when given; its path."""
    folder = root / "grading" / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{ASSIGNMENT}.ipynb")
    path.write_text(json.dumps(notebook, indent=1))
    if timestamp is not None:
        (folder / "timestamp.txt").write_text(timestamp)
    return path


def new_course(root: Path, submissions: dict[str, dict]) -> None:
    """A released course folder holding these submissions (student id -> notebook)."""
    copy_course(root)
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    for student, notebook in submissions.items():
        write_submission(root, student, notebook)


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
