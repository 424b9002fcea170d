"""The diagnosis record of one graded submission (format: docs/grading.md):
what each failed check found, as data, from which the class report counts mistakes."""

from __future__ import annotations

import re
from pathlib import Path

from autograder.core.checks import CheckStatus
from autograder.core.failures import AMBIGUOUS, GENERIC, NAMED, POLICY, SEEN, Hint
from autograder.core.results import CheckResult, GradeReport, StageResult
from autograder.frontends.reports.safe_write import read_json

FORMAT = "autograder-diagnosis/1"
# nbgrader's route: each graded notebook's record, <student>/<assignment>.json, from the course root
DIAGNOSES = "grading/diagnoses"
RANKS = {GENERIC: "generic", AMBIGUOUS: "ambiguous", NAMED: "named", SEEN: "named", POLICY: "policy"}
STAGE_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*Stage\s+(\d+)\b", re.IGNORECASE | re.MULTILINE)
MESSAGE_CHARS = 300


def _named(hint: Hint | None, status: CheckStatus) -> dict:
    """The mistake a hint names and its rank in words; none for no hint or a stage not attempted."""
    if not hint or status is CheckStatus.NOT_IMPLEMENTED:
        return {"mistake": "", "rank": ""}
    return {"mistake": hint.mistake, "rank": RANKS.get(hint.rank, "generic")}


def check_record(result: CheckResult) -> dict:
    return {"check": result.check.id, "status": result.status.value, "points": float(result.check.points),
            **_named(result.diagnosis, result.status),
            "hint": result.hint, "exception": result.exception, "hidden_failure": result.hidden_failure}


def stage_record(result: StageResult) -> dict:
    return {"number": result.stage.number, "id": result.stage.id, "label": result.stage.label,
            "bonus": result.stage.bonus, "score": float(result.score), "max_score": float(result.max_score),
            "status": result.status.value, **_named(result.diagnosis, result.status), "hint": result.hint,
            "checks": [check_record(c) for c in result.checks if c.status is not CheckStatus.PASSED]}


def cell_stages(notebook: str | Path) -> dict[int, int | None]:
    """Each cell's position (1-based) -> the stage whose heading it comes under; {} for an unreadable notebook."""
    data = read_json(notebook)
    cells = data.get("cells") if isinstance(data, dict) else []
    stages, current = {}, None
    for position, cell in enumerate(cells if isinstance(cells, list) else [], start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            heading = STAGE_HEADING.search("".join(source) if isinstance(source, list) else str(source))
            current = int(heading.group(1)) if heading else current
        stages[position] = current
    return stages


def cell_error_records(report: GradeReport, notebook: str | Path | None = None) -> list[dict]:
    where = cell_stages(notebook if notebook is not None else report.submission) if report.cell_errors else {}
    records = []
    for cell in report.cell_errors:
        error = cell.get("error") or {}
        kind = error.get("type") or ("CellStopped" if error.get("kind") == "fatal" else "Error")
        records.append({"cell": cell.get("index"), "stage": where.get(cell.get("index")), "type": str(kind),
                        "message": str(error.get("message", ""))[:MESSAGE_CHARS]})
    return records


def submission_record(report: GradeReport, stages: dict[int, StageResult] | None = None,
                      notebook: str | Path | None = None, hidden: bool = False) -> dict:
    """The diagnosis record of ``report``; ``stages``: each stage's result over visible and hidden examples
    (by default the report's own)."""
    if stages is None:
        stages, hidden = report.hidden_examples, bool(report.hidden_examples)
    final = [stages.get(r.stage.number, r) for r in report.stages]
    return {"format": FORMAT, "chapter": report.chapter.id, "error": report.error,
            "score": float(sum(r.score for r in final if not r.stage.bonus)),
            "max_score": float(sum(r.max_score for r in final if not r.stage.bonus)),
            "hidden_examples": hidden,
            "stages": [stage_record(r) for r in final],
            "cell_errors": cell_error_records(report, notebook)}
