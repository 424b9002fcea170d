"""The plain text of a grade that every output shares."""

from __future__ import annotations

from autograder.core.checks import CheckStatus
from autograder.core.results import GradeReport, StageResult


def format_points(value: float) -> str:
    """Points as every report shows them: ``10``, ``2.5``, ``0`` (``f"{value:g}"``, never ``10.0``)."""
    return f"{value:g}"


def bonus_total(report: GradeReport) -> str:
    """" (+7/10 bonus)" when a bonus stage was graded: shown beside the grade, never in it."""
    if not any(r.stage.bonus for r in report.stages):
        return ""
    return f" (+{format_points(report.bonus_score)}/{format_points(report.bonus_max_score)} bonus)"


def confinement_text(report: GradeReport) -> str:
    """The fences the student's code ran in, or 'unconfined': shown by every report."""
    from autograder.sandbox.confinement import describe

    if not report.confinement and report.error:
        return "no worker started: no student code ran"
    return describe(report.confinement)


def total_line(report: GradeReport) -> str:
    """``Total: 75/100 (+7/10 bonus)``; the bonus points alone when only bonus stages were graded."""
    if report.stages and all(r.stage.bonus for r in report.stages):
        return (f"Bonus: {format_points(report.bonus_score)}/{format_points(report.bonus_max_score)} "
                f"(outside the {format_points(report.chapter.max_score)})")
    return f"Total: {format_points(report.score)}/{format_points(report.max_score)}{bonus_total(report)}"


def stage_heading(result: StageResult) -> str:
    kind = "bonus points (not part of the 100)" if result.stage.bonus else "points"
    return f"{result.stage.label}: {format_points(result.score)}/{format_points(result.max_score)} {kind}"


def stage_text(result: StageResult) -> str:
    """Plain text of one stage with every check: printed by the notebook's test cells."""
    lines = [stage_heading(result) + (f" ({result.status.words})" if result.status is CheckStatus.NOT_IMPLEMENTED else "")]
    hints = hints_once(result)
    for c in result.checks:
        lines.append(f"  {c.status.mark} {c.check.id} {c.check.title} "
                     f"({format_points(c.score)}/{format_points(c.check.points)})")
        if c.status not in (CheckStatus.PASSED, CheckStatus.NOT_IMPLEMENTED):
            lines.append(f"      {c.message}")
            if hints[c.check.id]:
                lines.append(f"      hint: {hints[c.check.id]}")
    if result.status is CheckStatus.NOT_IMPLEMENTED:
        lines.append(f"  hint: {result.hint}")
    else:
        lines += [f"  note: {note}" for note in result.notes]
    return "\n".join(lines)


_SMALLEST = " (smallest failing case: "


def split_example(message: str) -> tuple[str, str]:
    """A failure message and the smallest failing example it names ("" when none)."""
    head, found, rest = message.partition(_SMALLEST)
    return (head, rest[:-1] if rest.endswith(")") else rest) if found else (message, "")


def hints_once(result: StageResult) -> dict[str, str]:
    """Each failed check's hint by check id, "" where an earlier check of the stage gave the same one."""
    hints: dict[str, str] = {}
    for c in result.checks:
        hint = c.hint if c.status not in (CheckStatus.PASSED, CheckStatus.NOT_IMPLEMENTED) else ""
        hints[c.check.id] = "" if hint in hints.values() else hint
    return hints
