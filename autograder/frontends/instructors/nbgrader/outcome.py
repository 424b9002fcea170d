"""Whether a student's last autograde finished, and what it repaired, for ``make export``.

nbgrader keeps a student's earlier grades when a later autograde fails, and says so nowhere, so
each autograde leaves ``grading/outcomes/<student>/<assignment>.json``, written only by
nbgrader's process: *not finished* by :class:`~.repair.RepairCells` (the first step), graded by
:class:`RecordOutcome` (the last), or failed by ``make autograde``. Not graded: a row of zeros.
"""

from __future__ import annotations

import json
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.frontends.reports.diagnoses import write_record

OUTCOMES = "grading/outcomes"
UNFINISHED = "the last autograde of this submission did not finish (its log says why)"


def outcome_path(student: str, assignment: str, root: Path | str = ".") -> Path | None:
    return diagnosis_path(Path(root) / OUTCOMES, student, assignment)


def diagnosis_path(folder: Path, student: str, assignment: str) -> Path | None:
    """``folder/<student>/<assignment>.json``; None for an id that is not one folder name."""
    if any(not name or name in (".", "..") or Path(name).name != name or "\\" in name for name in (student, assignment)):
        return None
    return folder / student / f"{assignment}.json"


def read_outcome(student: str, assignment: str, root: Path | str = ".") -> dict | None:
    """The record (``graded``, ``reason``, ``notes``), or None."""
    path = outcome_path(student, assignment, root)
    try:
        record = json.loads(path.read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _write(student: str, assignment: str, root: Path | str, record: dict) -> None:
    path = outcome_path(student, assignment, root)
    if path is not None:
        write_record(path, record)


def start_outcome(student: str, assignment: str, notes: list[str], root: Path | str = ".") -> None:
    _write(student, assignment, root, {"graded": False, "reason": UNFINISHED, "notes": notes})


def finish_outcome(student: str, assignment: str, root: Path | str = ".") -> None:
    record = read_outcome(student, assignment, root) or {}
    _write(student, assignment, root, {"graded": True, "reason": "", "notes": record.get("notes", [])})


def fail_outcome(student: str, assignment: str, reason: str, root: Path | str = ".") -> None:
    record = read_outcome(student, assignment, root) or {}
    _write(student, assignment, root, {"graded": False, "reason": reason, "notes": record.get("notes", [])})


class RecordOutcome(NbGraderPreprocessor):
    """The last autograde step: the grades are all in the gradebook now."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        finish_outcome(str(info["student"]), str(info["assignment"]))
        return nb, resources
