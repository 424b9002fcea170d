"""Whether a student's last autograde finished, and what it repaired: what ``make export``
needs so that no row is silently wrong.

nbgrader keeps a student's earlier grades in the gradebook when a later autograde fails, and
says so nowhere the CSV could show. So each autograde leaves a record,
``grading/outcomes/<student>/<assignment>.json`` (relative to the course root, where nbgrader
runs), written only by nbgrader's process and ``make autograde`` (never by the sandboxed
worker, which cannot read or write ``grading/``):

- :class:`~.repair.RepairCells`, the first sanitize step, writes it as *not finished*, with its
  repairs as notes (:func:`start_outcome`);
- :class:`RecordOutcome`, the last autograde step, marks it graded (:func:`finish_outcome`);
- ``make autograde`` writes nbgrader's error as the reason when a student fails
  (:func:`fail_outcome`).

A record still *not finished* (plain ``nbgrader autograde`` that failed) or failed makes the
student's exported row zeros with ``NOT GRADED: <reason>``.
"""

from __future__ import annotations

import json
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.frontends.reports.diagnoses import write_record

OUTCOMES = "grading/outcomes"
UNFINISHED = "the last autograde of this submission did not finish (its log says why)"


def outcome_path(student: str, assignment: str, root: Path | str = ".") -> Path | None:
    """``root/grading/outcomes/<student>/<assignment>.json``; None for an id that is not one folder name."""
    if any(not name or name in (".", "..") or Path(name).name != name or "\\" in name for name in (student, assignment)):
        return None
    return Path(root) / OUTCOMES / student / f"{assignment}.json"


def read_outcome(student: str, assignment: str, root: Path | str = ".") -> dict | None:
    """The record (``graded``, ``reason``, ``notes``), or None when there is none (never autograded
    since outcomes were kept) or it cannot be read."""
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
    """The last autograde step (nbgrader_config.py): the student's grades are all in the
    gradebook now, so the outcome record says graded."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        finish_outcome(str(info["student"]), str(info["assignment"]))
        return nb, resources
