"""Simulated students and a course folder to grade them, for the demo, the benches and the tests."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder import CHECKOUT
from autograder.chapters import DEFAULT, load

ASSIGNMENT = DEFAULT  # the nbgrader assignment id is the chapter id
REPO = CHECKOUT  # the checkout


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


def student_notebook(release: dict, solution: dict, *, done: set[int] | None = None,
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
            wrong, right = MISTAKES[number][1], MISTAKES[number][0]
            assert right in source, (number, right)
            source = source.replace(right, wrong)
        if number == broken:
            source = source.replace("):\n", ")\n", 1)  # a missing colon: the whole cell fails to compile
        cell["source"] = source
    return notebook


def release_and_solution(assignment: str = ASSIGNMENT) -> tuple[dict, dict]:
    chapter = load(assignment)
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
            return student_notebook(release, solution, done=None if self.done is None else set(self.done),
                                mistake=self.mistake, broken=self.broken)


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
