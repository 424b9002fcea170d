"""What a grade looks like: the console table, the notebook's text, Gradescope's results.json."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from autograder.engine import GradeReport, StageResult
from autograder.stages import STAGES

MARK = {"passed": "✓", "failed": "✗", "not_implemented": "·", "stopped": "⏱"}


def _points(value: float) -> str:
    return f"{value:g}"


def stage_text(result: StageResult) -> str:
    """Plain text of one stage with every check: printed by the notebook's test cells."""
    lines = [f"{result.stage.label}: {_points(result.score)}/{_points(result.max_score)} points"
             + ("" if result.status != "not implemented yet" else " (not implemented yet)")]
    for c in result.checks:
        lines.append(f"  {MARK[c.status]} {c.check.code} {c.check.title} "
                     f"({_points(c.score)}/{_points(c.check.points)})")
        if c.status != "passed" and c.status != "not_implemented":
            lines.append(f"      {c.message}")
            if c.hint:
                lines.append(f"      hint: {c.hint}")
    if result.status == "not implemented yet":
        lines.append(f"  hint: {result.hint}")
    return "\n".join(lines)


def print_console(report: GradeReport, verbose: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=False)
    console.print(f"[bold]Grading[/bold] {report.submission} [dim](device: {report.device})[/dim]")
    if report.error:
        console.print(f"[bold red]Could not grade:[/bold red] {report.error}")
    _print_cell_errors(console, report, verbose)
    table = Table(show_lines=True, expand=False)
    table.add_column("Stage", no_wrap=True)
    table.add_column("Points", justify="right", no_wrap=True)
    table.add_column("Result")
    table.add_column("Hint")
    for result in report.stages:
        style = {"passed": "green", "not implemented yet": "dim", "failed": "red", "stopped": "red"}[result.status]
        summary = result.summary
        if verbose and result.status != "passed":
            summary = "\n".join(f"{MARK[c.status]} {c.check.code} {c.message or c.check.title}"
                                for c in result.failures)
        table.add_row(f"{result.stage.number} {result.stage.id}",
                      f"{_points(result.score)}/{_points(result.max_score)}",
                      f"[{style}]{summary}[/{style}]", result.hint)
    console.print(table)
    console.print(f"[bold]Total: {_points(report.score)}/{_points(report.max_score)}[/bold]"
                  f"  [dim]({report.seconds:.1f} s)[/dim]")
    if report.score < report.max_score and not report.error:
        console.print("[dim]Run `make test STAGE=N` to grade one stage; each stage's test cell in the "
                      "notebook prints every check of that stage.[/dim]")


# Errors that are the expected echo of an unfinished stage (a stub raising, then a demo cell
# missing the stub's result); shown with --verbose only.
_QUIET_ERRORS = {"NotImplementedError", "NameError"}


def _print_cell_errors(console, report: GradeReport, verbose: bool) -> None:
    shown = [c for c in report.cell_errors
             if verbose or c.get("error", {}).get("type") not in _QUIET_ERRORS]
    for cell in shown[:8]:
        err = cell.get("error", {})
        raised = err.get("where", "")
        where = f" (raised at {raised})" if raised and not raised.startswith(f"cell {cell.get('index')},") else ""
        console.print(f"[yellow]cell {cell.get('index')}:[/yellow] {err.get('type') or 'error'}: "
                      f"{str(err.get('message', ''))[:200]}{where}", markup=True)
    hidden = len(report.cell_errors) - len(shown[:8])
    if shown or (verbose and hidden):
        console.print(f"[dim]{len(report.cell_errors)} cell(s) raised errors when the notebook ran top to bottom; "
                      "the other cells still ran" + (f"; {hidden} more with -v" if hidden and not verbose else "")
                      + "[/dim]")


def gradescope_json(report: GradeReport) -> dict:
    tests = []
    for result in report.stages:
        for c in result.checks:
            output = c.message if c.status != "passed" else "passed"
            if c.hint and c.status != "passed":
                output += f"\nhint: {c.hint}"
            tests.append({
                "name": f"{result.stage.label} {c.check.code}: {c.check.title}",
                "number": c.check.code,
                "score": c.score,
                "max_score": c.check.points,
                "status": "passed" if c.status == "passed" else "failed",
                "output": output,
                "visibility": "visible",
            })
    summary = [f"{r.stage.label}: {_points(r.score)}/{_points(r.max_score)} {r.summary}" for r in report.stages]
    if report.error:
        summary.insert(0, f"Could not grade: {report.error}")
    return {"score": report.score, "output": "\n".join(summary), "tests": tests,
            "stdout_visibility": "visible"}


def write_json(path: str | Path, data: dict) -> None:
    """Write atomically, so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-")
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(tmp, path)


def provisional_json(submission: str, stage_numbers) -> dict:
    """Written before grading starts: if anything kills the grader, a valid 0 stands."""
    from autograder.engine import _not_graded, select_stages

    report = GradeReport(submission=submission, error="grading did not finish")
    report.stages = [_not_graded(s, report.error) for s in select_stages(stage_numbers)]
    return gradescope_json(report)


__all__ = ["print_console", "gradescope_json", "write_json", "stage_text", "provisional_json", "STAGES"]
