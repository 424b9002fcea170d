"""The notebook's test cells: ``grade_stage("ch03_attention", 4, globals())`` runs the stage's checks on
the kernel's objects, prints them and returns the points; ``hidden_seed=`` grades hidden examples too."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import replace
from html import escape

from autograder.core.checks import CheckStatus
from autograder.core.engine import HIDDEN_FAILURE, checks_hidden_examples_could_fail, run_in_kernel, with_hidden
from autograder.core.submission import LocalTransport, Submission
from autograder.frontends.reports.html import stage_html
from autograder.frontends.reports.text import format_points, stage_text
from autograder.sandbox.settings import HINT_LEVELS, Settings

# The visible result of each stage, kept for the hidden call in the same cell just below.
_last_visible: dict[tuple[str, int], object] = {}


def grade_stage(chapter_id: str, number, namespace: dict, *, device: str = "cpu",
                hidden_seed: int | None = None, stage_seconds: float | None = None):
    """An Interrupt stops the cell's checks at once, with one line and no points."""
    from autograder.chapters import load

    chapter = load(chapter_id)
    try:
        stage = chapter.stage(number)
    except KeyError:
        # a test cell of an earlier release for a stage this course no longer grades
        print(f"Stage {number} is not part of this course (your instructor dropped it): nothing to check here")
        return cell_value(0.0)
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        # the kernel runs the student's code, so its answer could be forged: worth 0 here,
        # the sandboxed run (nbgrader.execute.SandboxExecute) replaces this cell's output
        print(f"{stage.label}: graded by the course autograder in a separate process")
        return 0

    key = (chapter.id, stage.number)
    settings = Settings.read(stage_seconds=stage_seconds)
    if type(namespace.get("HINTS")) is int and namespace["HINTS"] in HINT_LEVELS:  # the student's `HINTS = 2`
        settings = replace(settings, hint_level=namespace["HINTS"])
    try:
        if hidden_seed is None:
            result = _run(chapter, stage, namespace, device, None, settings=settings)
            _last_visible[key] = result
            show_feedback(result, lambda: stage_html(result, failing_exhibit(chapter, result, namespace, device)))
            return cell_value(result.score)
        visible = _last_visible.pop(key, None) or _run(chapter, stage, namespace, device, None, settings=settings)
        rerun = checks_hidden_examples_could_fail(visible)
        result = with_hidden(visible, _run(chapter, stage, namespace, device, hidden_seed, rerun, settings=settings)) \
            if rerun else visible
        print(hidden_text(result))
        return cell_value(result.score)
    except KeyboardInterrupt:
        # the student's Interrupt (or the time limit striking between two calls of their code):
        # one line, not a traceback nor the next example
        print(f"{stage.label}: {INTERRUPTED}")
        return cell_value(0.0)


INTERRUPTED = "checks stopped by an interrupt (or the stage's time limit); no points from this run, run the cell again"


def cell_value(score: float):
    """The plain number under nbgrader, which reads the partial credit from the echo; else points shown as nothing."""
    return score if os.environ.get("NBGRADER_EXECUTION") else StagePoints(score)


class StagePoints(float):
    """Points shown as nothing in a notebook: the report above already says them."""

    def _ipython_display_(self):
        pass


def _in_a_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def show_feedback(result, html_of) -> None:
    """In a Jupyter kernel one display with text/html and a text/plain fallback; elsewhere the text."""
    text = stage_text(result)
    if not _in_a_kernel():
        print(text)
        return
    from IPython.display import display

    try:
        html = html_of()
    except Exception as exc:  # the feedback's looks must never cost the student the report
        html = f"<pre>{escape(text)}</pre><p><i>(the HTML feedback failed: {escape(type(exc).__name__)})</i></p>"
    display({"text/plain": text, "text/html": html}, raw=True)


def failing_exhibit(chapter, result, namespace: dict, device: str):
    """The attention weights of the first failed check's example, or None."""
    failed = [c for c in result.checks if c.status is CheckStatus.FAILED]
    exhibit_of = chapter.parts(result.stage).exhibit
    if exhibit_of is None or not failed:
        return None
    first = next((c for c in failed if c.example is not None), failed[0])
    sub = Submission(LocalTransport(namespace, device), result.stage.label, ())
    try:
        return exhibit_of(sub, first.check.id, first.example)
    except Exception:  # the student's module fails on its example (the table says so): no picture
        return None


def _run(chapter, stage, namespace: dict, device: str, examples_seed: int | None, only=None, *,
         settings: Settings | None = None):
    printed = CappedOutput()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            return run_in_kernel(chapter, stage, namespace, device, examples_seed, only, settings=settings)
    finally:
        printed.show()


class CappedOutput(io.StringIO):
    """What the student's code prints while the checks run: the first lines, then a count."""

    LINES = 20

    def __init__(self):
        super().__init__()
        self.lines, self.open = 0, False  # lines ended so far; whether the last one is still open

    def write(self, text: str) -> int:
        if self.lines < self.LINES:  # past the kept lines only their number counts
            super().write(text)
        self.lines += text.count("\n")
        if text:
            self.open = not text.endswith("\n")
        return len(text)

    def show(self) -> None:
        total = self.lines + self.open
        kept = [line[:500] for line in self.getvalue().split("\n")[:min(total, self.LINES)]]
        if kept:
            print("Your code printed, while the checks ran it:", *kept, sep="\n")
        if total > self.LINES:
            print(f"... and {total - self.LINES} more line{'s' if total > self.LINES + 1 else ''} (cut)")


def hidden_text(result) -> str:
    """The score with hidden examples, and the checks that fail only there (never the hidden inputs)."""
    points = f"{format_points(result.score)}/{format_points(result.max_score)}"
    lines = [f"{result.stage.label} with the hidden examples: {points} points (this cell's score)"]
    lines += [f"  {c.status.mark} {c.check.id} {c.check.title}: {HIDDEN_FAILURE}" for c in result.checks if c.message == HIDDEN_FAILURE]
    return "\n".join(lines)
