"""The table ``make test``, CI and Gradescope's log print, drawn with rich."""

from __future__ import annotations

import os
import sys

from autograder.core.checks import CheckStatus
from autograder.core.engine import check_preloads
from autograder.core.results import GradeReport
from autograder.frontends.reports.text import confinement_text, format_points, total_line
from autograder.sandbox.worker import Preload


def console_preload() -> None:
    """Imports rich and what its first table imports, before any student code runs."""
    import io

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table("x", show_lines=True)
    table.add_row(escape("[x] ✓ ✗"))
    Console(file=io.StringIO(), highlight=False).print(table, "[bold]x[/bold]")


# What a grading process that prints this table imports before the submission runs.
GRADER_PRELOADS: tuple[Preload, ...] = (*check_preloads(), console_preload)


# Off a terminal (CI's log, a pipe) rich would squeeze the table into 80 columns and wrap a
# hint quoting a tensor over dozens of lines: a log reads at any width, so it gets a wide one
LOG_WIDTH = 160
STATUS_STYLE = {CheckStatus.PASSED: "green", CheckStatus.NOT_IMPLEMENTED: "dim", CheckStatus.FAILED: "red",
                CheckStatus.STOPPED: "red"}


def print_console(report: GradeReport, verbose: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape  # messages quote the submission: "[/red]" in it is text, not markup
    from rich.table import Column, Table

    wide = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    console = Console(highlight=False, soft_wrap=False, width=LOG_WIDTH if wide else None)
    console.print(f"[bold]Grading[/bold] {escape(report.submission)} [dim](device: {report.device})[/dim]")
    # the fences are the instructor's concern: named with V=1 only
    if verbose:
        console.print(f"[dim]confinement: {escape(confinement_text(report))}[/dim]")
    if report.error:
        console.print(f"[bold red]Could not grade:[/bold red] {escape(report.error)}")
    _print_cell_errors(console, report, verbose)
    table = Table(Column("Stage", no_wrap=True), Column("Points", justify="right", no_wrap=True), "Result", "Hint",
                  show_lines=True)
    for result in report.stages:
        style = STATUS_STYLE[result.status]
        summary, hint = result.summary, result.hint
        if verbose and result.status is not CheckStatus.PASSED:  # every failed check, each with its hint
            summary = "\n".join(f"{c.status.mark} {c.check.id} {c.message or c.check.title}" for c in result.failures)
            hint = "\n".join(f"{c.check.id} {c.hint}" for c in result.failures if c.hint) or hint
        table.add_row(f"{result.stage.number} {result.stage.id}" + (" (bonus)" if result.stage.bonus else ""),
                      f"{format_points(result.score)}/{format_points(result.max_score)}",
                      f"[{style}]{escape(summary)}[/{style}]", escape(hint))
    console.print(table)
    console.print(f"[bold]{total_line(report)}[/bold]  [dim]({report.seconds:.1f} s)[/dim]")
    if report.score < report.max_score and not report.error:
        console.print("[dim]`make test STAGE=N` grades one stage, `V=1` shows every failed check with its hint, `HINTS=2` "
                      "the code that fixes it; each stage's test cell in the notebook prints every check of that stage.[/dim]")


# Errors that are the expected echo of an unfinished stage (a stub raising, then a demo cell
# missing the stub's result); shown with --verbose only.
_QUIET_ERRORS = {"NotImplementedError", "NameError"}


def _print_cell_errors(console, report: GradeReport, verbose: bool) -> None:
    from rich.markup import escape

    shown = [c for c in report.cell_errors
             if verbose or c.get("error", {}).get("type") not in _QUIET_ERRORS]
    for cell in shown[:8]:
        err = cell.get("error", {})
        raised = err.get("where", "") + (f": {err['code']}" if err.get("where") and err.get("code") else "")
        name = str(cell.get("name") or f"cell {cell.get('index')}")
        # an error inside the cell itself: only its line; one in a function: the cell that defines it
        where = (f" ({raised[len(name) + 2:]})" if raised.startswith(f"{name}, ")
                 else f" (raised at {raised})" if raised else "")
        console.print(f"[yellow]{escape(name)}:[/yellow] "
                      + escape(f"{err.get('type') or 'error'}: {str(err.get('message', ''))[:200]}{where}"))
    hidden = len(report.cell_errors) - len(shown[:8])
    if shown or (verbose and hidden):
        console.print(f"[dim]{len(report.cell_errors)} cell(s) raised errors when the notebook ran top to bottom; "
                      "the other cells still ran" + (f"; {hidden} more with -v (make test V=1)" if hidden and not verbose else "")
                      + "[/dim]")
