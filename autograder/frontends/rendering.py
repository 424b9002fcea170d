"""What a grade looks like: the console table, the notebook's text, Gradescope's results.json."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from autograder.core.checks import CheckStatus
from autograder.core.engine import check_preloads
from autograder.core.results import GradeReport, StageResult
from autograder.sandbox.preload import Preload


def _points(value: float) -> str:
    return f"{value:g}"


def _bonus_total(report: GradeReport) -> str:
    """" (+7/10 bonus)" when a bonus stage was graded: shown beside the grade, never in it."""
    if not any(r.stage.bonus for r in report.stages):
        return ""
    return f" (+{_points(report.bonus_score)}/{_points(report.bonus_max_score)} bonus)"


def warm_up_console() -> None:
    """rich and what it imports on its first table, imported before student code runs."""
    import io

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_lines=True)
    table.add_column("x")
    table.add_row(escape("[x] ✓ ✗"))
    Console(file=io.StringIO(), highlight=False).print(table, "[bold]x[/bold]")


def grader_preloads() -> tuple[Preload, ...]:
    """Everything a grading process imports before the submission's first cell runs
    (``Worker(..., preload=...)``, :mod:`autograder.sandbox.preload`): what the checks import
    lazily (:func:`autograder.core.engine.check_preloads`) and what the reports do."""
    return (*check_preloads(), warm_up_console)


def confinement_text(report: GradeReport) -> str:
    """The fences the student's code ran in, or 'unconfined': shown by every report."""
    from autograder.sandbox.confinement import describe

    if not report.confinement and report.error:
        return "no worker started: no student code ran"
    return describe(report.confinement)
def total_line(report: GradeReport) -> str:
    """"Total: 75/100 (+7/10 bonus)"; with only bonus stages graded (make test STAGE=8) there is
    no total out of 100 to speak of, so the line names the bonus points alone."""
    if report.stages and all(r.stage.bonus for r in report.stages):
        return f"Bonus: {_points(report.bonus_score)}/{_points(report.bonus_max_score)} (outside the 100)"
    return f"Total: {_points(report.score)}/{_points(report.max_score)}{_bonus_total(report)}"


def stage_text(result: StageResult) -> str:
    """Plain text of one stage with every check: printed by the notebook's test cells."""
    kind = "bonus points (not part of the 100)" if result.stage.bonus else "points"
    lines = [f"{result.stage.label}: {_points(result.score)}/{_points(result.max_score)} {kind}"
             + (f" ({result.status.words})" if result.status is CheckStatus.NOT_IMPLEMENTED else "")]
    hints = hints_once(result)
    for c in result.checks:
        lines.append(f"  {c.status.mark} {c.check.id} {c.check.title} "
                     f"({_points(c.score)}/{_points(c.check.points)})")
        if c.status not in (CheckStatus.PASSED, CheckStatus.NOT_IMPLEMENTED):
            lines.append(f"      {c.message}")
            if hints[c.check.id]:
                lines.append(f"      hint: {hints[c.check.id]}")
    if result.status is CheckStatus.NOT_IMPLEMENTED:
        lines.append(f"  hint: {result.hint}")
    return "\n".join(lines)


STATUS_STYLE = {CheckStatus.PASSED: "green", CheckStatus.NOT_IMPLEMENTED: "dim", CheckStatus.FAILED: "red",
                CheckStatus.STOPPED: "red"}


def print_console(report: GradeReport, verbose: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape  # messages quote the submission: "[/red]" in it is text, not markup
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=False)
    console.print(f"[bold]Grading[/bold] {escape(report.submission)} [dim](device: {report.device})[/dim]")
    console.print(f"[dim]confinement: {escape(confinement_text(report))}[/dim]")
    if report.error:
        console.print(f"[bold red]Could not grade:[/bold red] {escape(report.error)}")
    _print_cell_errors(console, report, verbose)
    table = Table(show_lines=True, expand=False)
    table.add_column("Stage", no_wrap=True)
    table.add_column("Points", justify="right", no_wrap=True)
    table.add_column("Result")
    table.add_column("Hint")
    for result in report.stages:
        style = STATUS_STYLE[result.status]
        summary = result.summary
        if verbose and result.status is not CheckStatus.PASSED:
            summary = "\n".join(f"{c.status.mark} {c.check.id} {c.message or c.check.title}"
                                for c in result.failures)
        table.add_row(f"{result.stage.number} {result.stage.id}" + (" (bonus)" if result.stage.bonus else ""),
                      f"{_points(result.score)}/{_points(result.max_score)}",
                      f"[{style}]{escape(summary)}[/{style}]", escape(result.hint))
    console.print(table)
    console.print(f"[bold]{total_line(report)}[/bold]  [dim]({report.seconds:.1f} s)[/dim]")
    if report.score < report.max_score and not report.error:
        console.print("[dim]Run `make test STAGE=N` to grade one stage; each stage's test cell in the "
                      "notebook prints every check of that stage.[/dim]")


# Errors that are the expected echo of an unfinished stage (a stub raising, then a demo cell
# missing the stub's result); shown with --verbose only.
_QUIET_ERRORS = {"NotImplementedError", "NameError"}


def _print_cell_errors(console, report: GradeReport, verbose: bool) -> None:
    from rich.markup import escape

    shown = [c for c in report.cell_errors
             if verbose or c.get("error", {}).get("type") not in _QUIET_ERRORS]
    for cell in shown[:8]:
        err = cell.get("error", {})
        raised = err.get("where", "")
        where = f" (raised at {raised})" if raised and not raised.startswith(f"cell {cell.get('index')},") else ""
        console.print(f"[yellow]cell {cell.get('index')}:[/yellow] "
                      + escape(f"{err.get('type') or 'error'}: {str(err.get('message', ''))[:200]}{where}"))
    hidden = len(report.cell_errors) - len(shown[:8])
    if shown or (verbose and hidden):
        console.print(f"[dim]{len(report.cell_errors)} cell(s) raised errors when the notebook ran top to bottom; "
                      "the other cells still ran" + (f"; {hidden} more with -v (make test V=1)" if hidden and not verbose else "")
                      + "[/dim]")


def gradescope_json(report: GradeReport) -> dict:
    """Gradescope's results.json. The top-level ``score`` is the grade out of 100; Gradescope
    takes it as the submission's score instead of summing the tests, so bonus checks appear as
    tests (named "(bonus)", tagged "bonus", with their own max_score) without adding to it: the
    other tests' scores add up to ``score`` and their max_scores to 100. The bonus total is in
    ``extra_data`` for an instructor who wants to grant it as extra credit."""
    tests = []
    for result in report.stages:
        for c in result.checks:
            passed = c.status is CheckStatus.PASSED
            output = "passed" if passed else c.message
            if c.hint and not passed:
                output += f"\nhint: {c.hint}"
            tests.append({
                "name": f"{result.stage.label} {c.check.id}: {c.check.title}"
                        + (" (bonus)" if result.stage.bonus else ""),
                "number": c.check.id,
                "score": c.score,
                "max_score": c.check.points,
                "status": "passed" if passed else "failed",
                "output": output,
                "visibility": "visible",
                **({"tags": ["bonus"]} if result.stage.bonus else {}),
            })
    summary = [f"{r.stage.label}: {_points(r.score)}/{_points(r.max_score)}{' bonus' if r.stage.bonus else ''} "
               f"{r.summary}" for r in report.stages]
    if report.error:
        summary.insert(0, f"Could not grade: {report.error}")
    results = {"score": report.score, "output": "\n".join(summary), "tests": tests,
               "stdout_visibility": "visible"}
    if any(r.stage.bonus for r in report.stages):
        summary.append(f"Total: {_points(report.score)}/{_points(report.max_score)}{_bonus_total(report)}")
        results["output"] = "\n".join(summary)
        results["extra_data"] = {"bonus_score": report.bonus_score, "bonus_max_score": report.bonus_max_score}
    results.setdefault("extra_data", {})["confinement"] = confinement_text(report)
    if report.hidden_examples:
        _add_hidden_examples(results, report)
    return results


def _add_hidden_examples(results: dict, report: GradeReport) -> None:
    """The grade over the visible and the hidden examples: the top-level score (which Gradescope
    takes as the grade) and, per check that passed on the visible examples, a test shown only
    after the due date, worth minus its points where the hidden examples fail it. The visible
    tests and the output stay as the student's own runs show them."""
    final = [report.hidden_examples.get(r.stage.number, r) for r in report.stages]
    lost = 0.0
    for visible, both in zip(report.stages, final):
        for seen, c in zip(visible.checks, both.checks):
            if seen.status is not CheckStatus.PASSED:
                continue
            failed = c.status is not CheckStatus.PASSED
            lost += c.check.points if failed and not visible.stage.bonus else 0.0
            results["tests"].append({
                "name": f"{visible.stage.label} {c.check.id}: {c.check.title} (hidden examples)"
                        + (" (bonus)" if visible.stage.bonus else ""),
                "number": f"{c.check.id}h",
                "score": -c.check.points if failed else 0.0,
                "max_score": 0.0,
                "status": "failed" if failed else "passed",
                "output": f"{c.message}" + (f"\nhint: {c.hint}" if c.hint else "") if failed
                          else "passed on the hidden examples too",
                "visibility": "after_due_date",
                "tags": ["hidden examples", *(["bonus"] if visible.stage.bonus else [])],
            })
    results["score"] = sum(r.score for r in final if not r.stage.bonus)
    extra = results["extra_data"]
    extra["hidden_examples"] = {"visible_score": report.score, "points_lost": lost}
    if "bonus_score" in extra:
        extra["bonus_score"] = sum(r.score for r in final if r.stage.bonus)


def write_json(path: str | Path, data: dict) -> None:
    """Write atomically, so a reader never sees half a file; a failed write leaves no temp file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=2)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class OutputRefused(Exception):
    """The path given for an output file holds something else: nothing was written."""


def overwrite_refusal(path: str | Path, flag: str, ours: Callable[[bytes], bool]) -> str | None:
    """Why ``path`` may not take an output file that ``flag`` names (a folder, a link, a file
    this grader did not write, as ``ours`` judges its bytes), or None when it may: a mistyped
    path must never cost anyone a gradebook or a notebook."""
    path = Path(path)
    if path.is_symlink():
        return f"{flag} {path}: a link is there; give the path of a file"
    if path.is_dir():
        return f"{flag} {path}: that is a folder; give a file path inside it"
    if path.exists():
        if not path.is_file():
            return f"{flag} {path}: that is not a regular file"
        try:
            data = path.read_bytes()
        except OSError as exc:
            return f"{flag} {path}: cannot read what is there ({exc})"
        if data.strip() and not ours(data):
            return f"{flag} {path}: that file was not written by this grader; it was left as it is"
    return None


def is_results_json(data: bytes) -> bool:
    try:
        earlier = json.loads(data)
    except ValueError:
        return False
    return isinstance(earlier, dict) and "tests" in earlier


def write_results(path: str | Path, data: dict) -> None:
    """results.json at ``path``, refused (:class:`OutputRefused`) where it would replace anything else."""
    why = overwrite_refusal(path, "--results", is_results_json)
    if why:
        raise OutputRefused(why)
    write_json(path, data)


def provisional_json(chapter, submission: str, stage_numbers) -> dict:
    """Written before grading starts: if anything kills the grader, a valid 0 stands."""
    from autograder.core.engine import not_graded_report

    return gradescope_json(not_graded_report(chapter, submission, "grading did not finish", stage_numbers))


# -- the notebook's feedback: HTML with a text/plain fallback ---------------------------------

_SMALLEST = " (smallest failing case: "


def split_example(message: str) -> tuple[str, str]:
    """A failure message and the smallest failing example it names ("" when none)."""
    head, found, rest = message.partition(_SMALLEST)
    return (head, rest[:-1] if rest.endswith(")") else rest) if found else (message, "")


def hints_once(result: StageResult) -> dict[str, str]:
    """Each failed check's hint, keyed by check id, or "" where an earlier check of the stage
    already gave the same one: the reader sees each piece of advice once."""
    seen: set[str] = set()
    hints = {}
    for c in result.checks:
        hint = c.hint if c.status not in (CheckStatus.PASSED, CheckStatus.NOT_IMPLEMENTED) else ""
        hints[c.check.id] = "" if hint in seen else hint
        seen.add(hint)
    return hints


def attention_heatmap_png(exhibit) -> bytes:
    """Expected attention weights beside the student's (when known), as a small PNG."""
    import io

    import numpy as np
    from matplotlib.figure import Figure  # not pyplot: the kernel's own plotting backend stays as it is

    panels = [("expected", exhibit.expected)] + ([("your", exhibit.student)] if exhibit.student is not None else [])
    t = exhibit.expected.shape[-1]
    size = min(2.2 + 0.18 * t, 4.0)
    fig = Figure(figsize=(size * len(panels) + 0.6, size), dpi=90, layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    image = None
    for ax, (name, weights) in zip(axes, panels):
        data = weights.detach().double().nan_to_num(nan=-1.0).clamp(-1.0, 1.5).numpy()
        image = ax.imshow(data, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(f"{name} attention weights", fontsize=9)
        ax.set_xlabel("key token", fontsize=8)
        ax.set_ylabel("query token", fontsize=8)
        ax.tick_params(labelsize=7)
        ticks = range(0, t, max(1, t // 8))  # whole token positions, at most about 8 labels
        ax.set_xticks(list(ticks))
        ax.set_yticks(list(ticks))
        if t <= 8:
            for (i, j), v in np.ndenumerate(data):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if v < 0.5 else "black")
    fig.colorbar(image, ax=list(axes), shrink=0.8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _e(text) -> str:
    import html

    return html.escape(str(text))


_HTML_MARK = {CheckStatus.PASSED: ("✓ passed", "#1a7f37"), CheckStatus.FAILED: ("✗ failed", "#cf222e"),
              CheckStatus.STOPPED: ("⏱ stopped", "#cf222e"), CheckStatus.NOT_IMPLEMENTED: ("· not implemented", "#6e7781")}


def stage_html(result: StageResult, heatmap_png: bytes | None = None, exhibit=None) -> str:
    """The notebook's feedback for one stage: a table of checks (points, pass/fail), under each
    failed check its message, the smallest failing example and its hint (each hint once), and
    the attention heatmap of the failing example when there is one."""
    import base64

    kind = "bonus points (not part of the 100)" if result.stage.bonus else "points"
    colour = "#1a7f37" if result.status is CheckStatus.PASSED else "#cf222e"
    hints = hints_once(result)
    cell = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #d0d7de"
    rows = []
    for c in result.checks:
        word, tint = _HTML_MARK[c.status]
        rows.append(f'<tr><td style="{cell}"><code>{_e(c.check.id)}</code> {_e(c.check.title)}</td>'
                    f'<td style="{cell};text-align:right">{_points(c.score)}/{_points(c.check.points)}</td>'
                    f'<td style="{cell};color:{tint};white-space:nowrap">{word}</td></tr>')
        if c.status in (CheckStatus.PASSED, CheckStatus.NOT_IMPLEMENTED):
            continue
        message, example = split_example(c.message)
        details = [f"<div>{_e(message)}</div>"]
        if example:
            details.append(f"<div><b>smallest failing example:</b> <code>{_e(example)}</code></div>")
        if hints[c.check.id]:
            details.append(f"<div><b>hint:</b> {_e(hints[c.check.id])}</div>")
        rows.append(f'<tr><td colspan="3" style="{cell};padding-left:24px;font-size:90%">{"".join(details)}</td></tr>')
    parts = ['<div class="ag-feedback" style="font-family:sans-serif;font-size:13px">',
             f'<div style="font-weight:bold;color:{colour}">{_e(result.stage.label)}: '
             f'{_points(result.score)}/{_points(result.max_score)} {kind}</div>',
             f'<table style="border-collapse:collapse;margin:4px 0"><thead><tr><th style="{cell}">check</th>'
             f'<th style="{cell}">points</th><th style="{cell}">result</th></tr></thead><tbody>{"".join(rows)}</tbody></table>']
    if result.status is CheckStatus.NOT_IMPLEMENTED:
        parts.append(f"<div><b>hint:</b> {_e(result.hint)}</div>")
    if heatmap_png:
        encoded = base64.b64encode(heatmap_png).decode("ascii")
        caption = _e(exhibit.example) + (f"<br>{_e(exhibit.reading)}" if exhibit.reading else "")
        parts.append(f'<figure style="margin:6px 0"><img alt="attention weights: expected and yours" '
                     f'src="data:image/png;base64,{encoded}"/><figcaption style="font-size:90%">'
                     f"Head 0, first sequence of the failing example: {caption}</figcaption></figure>")
    parts.append("</div>")
    return "".join(parts)
