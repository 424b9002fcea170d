"""Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/)."""

from __future__ import annotations

from autograder.core.checks import CheckStatus
from autograder.core.results import GradeReport
from autograder.frontends.reports.diagnoses import check_record, submission_record
from autograder.frontends.reports.text import bonus_total, confinement_text, format_points


def _test(stage, c, passed_text: str = "passed", suffix: str = "", tags: tuple = (), **fields) -> dict:
    """One check's test (``passed_text``: its output if it passed), tagged "bonus" on a bonus stage; a failed
    one keeps its diagnosis (extra_data)."""
    ok = c.status is CheckStatus.PASSED
    suffix, tags = (suffix + " (bonus)", [*tags, "bonus"]) if stage.bonus else (suffix, list(tags))
    if not ok:
        record = check_record(c)
        fields["extra_data"] = {k: record[k] for k in ("status", "mistake", "rank", "exception", "hidden_failure")}
    return {"name": f"{stage.label} {c.check.id}: {c.check.title}{suffix}", "number": c.check.id,
            "score": c.score, "max_score": c.check.points, "status": "passed" if ok else "failed",
            "output": passed_text if ok else c.message + (f"\nhint: {c.hint}" if c.hint else ""), "visibility": "visible",
            **({"tags": tags} if tags else {}), **fields}


def _whole_points(stage, rows: list[dict], score: float, *tags: str, **fields) -> list[dict]:
    """A row for what rounding a stage's score down to whole points took (docs/grading.md), so that
    its rows add up to its score; none where nothing was rounded."""
    taken = sum(row["score"] for row in rows) - score
    if abs(taken) < 1e-9:
        return []
    tags = [*tags, "whole points"] + (["bonus"] if stage.bonus else [])
    return [{"name": f"{stage.label}: its score rounded down to whole points", "number": f"{stage.number}.whole",
             "score": -taken, "max_score": 0.0, "status": "failed",
             "output": "a stage scores whole points: its checks' points, rounded down", "visibility": "visible",
             "tags": tags, **fields}]


def gradescope_json(report: GradeReport) -> dict:
    """The top-level ``score`` is the grade, bonus tests beside it (tagged "bonus"); ``extra_data``
    holds the bonus total and the diagnosis record. Each stage's rows add up to its score."""
    tests = []
    for r in report.stages:
        rows = [_test(r.stage, c) for c in r.checks]
        tests += rows + _whole_points(r.stage, rows, r.score)
    summary = [f"{r.stage.label}: {format_points(r.score)}/{format_points(r.max_score)}{' bonus' if r.stage.bonus else ''} "
               f"{r.summary}" for r in report.stages]
    if report.error:
        summary.insert(0, f"Could not grade: {report.error}")
    extra = {"confinement": confinement_text(report)}
    if any(r.stage.bonus for r in report.stages):
        summary.append(f"Total: {format_points(report.score)}/{format_points(report.max_score)}{bonus_total(report)}")
        extra = {"bonus_score": report.bonus_score, "bonus_max_score": report.bonus_max_score, **extra}
    results = {"score": report.score, "output": "\n".join(summary), "tests": tests, "stdout_visibility": "visible",
               "extra_data": extra}
    if report.hidden_examples:
        _add_hidden_examples(results, report)
    # what each check diagnosed, as data (the class report reads it: reports/diagnoses.py)
    results["extra_data"]["diagnosis"] = submission_record(report)
    return results


def _add_hidden_examples(results: dict, report: GradeReport) -> None:
    """The grade over visible and hidden examples, and per check that passed on the visible ones a
    test shown after the due date, worth minus its points where the hidden examples fail it."""
    final = [report.hidden_examples.get(r.stage.number, r) for r in report.stages]
    for visible, both in zip(report.stages, final):
        rows = [_test(visible.stage, c, "passed on the hidden examples too", " (hidden examples)", ("hidden examples",),
                      number=f"{c.check.id}h", score=0.0 if c.status is CheckStatus.PASSED else -c.check.points,
                      max_score=0.0, visibility="after_due_date")
                for seen, c in zip(visible.checks, both.checks) if seen.status is CheckStatus.PASSED]
        results["tests"] += rows + _whole_points(visible.stage, rows, both.score - visible.score,
                                                 "hidden examples", visibility="after_due_date")
    results["score"] = sum(r.score for r in final if not r.stage.bonus)
    extra = results["extra_data"]
    extra["hidden_examples"] = {"visible_score": report.score, "points_lost": report.score - results["score"]}
    if "bonus_score" in extra:
        extra["bonus_score"] = sum(r.score for r in final if r.stage.bonus)


def provisional_json(chapter, submission: str, stage_numbers) -> dict:
    """Written before grading starts: if anything kills the grader, a valid 0 stands."""
    from autograder.core.engine import not_graded_report

    return gradescope_json(not_graded_report(chapter, submission, "grading did not finish", stage_numbers))
