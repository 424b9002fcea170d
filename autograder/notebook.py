"""The notebook's test cells: ``grade_stage(4, globals())``.

Runs the same checks as ``make test`` on the objects in the kernel, prints every check of
the stage with its hint, and returns the points earned, which nbgrader reads as the cell's
partial credit. (``make test``, CI and ``make autograde`` grade in a separate sandboxed
process; this in-kernel path is for instant feedback while working.)

The instructor's notebook adds a hidden block to each test cell (removed from the release
and from feedback)::

    grade_stage(4, globals(), hidden_seed=...)

It runs the stage's checks again on examples the student never saw (hypothesis draws other
sizes and tensors from the secret seed). The cell's value is then the stage's score over
both runs (:func:`with_hidden`): a check earns its points only if it passes on both.
"""

from __future__ import annotations

import os

IN_WORKER = False  # set by the grading worker: a submission's test cells must not grade

# The visible result of each stage, kept for the hidden call in the same cell just below.
_last_visible: dict[int, object] = {}


def grade_stage(number, namespace: dict, *, device: str = "cpu", seed: int | None = None,
                hidden_seed: int | None = None):
    if IN_WORKER:
        return None
    from autograder.stages import stage as lookup

    stage = lookup(number)
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        # nbgrader sets this while it autogrades. The kernel runs the student's code, so its
        # answer could be forged: the sandboxed engine grades the notebook afterwards and
        # replaces this cell's output (autograder.nbgrader_hooks.SandboxGrades). Until then the
        # cell is worth 0, so a pipeline without that step cannot hand out points.
        print(f"{stage.label}: graded by the course autograder in a separate process")
        return 0
    from autograder import report

    if hidden_seed is None:
        result = _run(stage, namespace, device, seed)
        _last_visible[stage.number] = result
        print(report.stage_text(result))
        return result.score
    visible = _last_visible.pop(stage.number, None) or _run(stage, namespace, device, seed)
    result = with_hidden(visible, _run(stage, namespace, device, hidden_seed))
    print(hidden_text(result))
    return result.score


def _run(stage, namespace: dict, device: str, seed: int | None):
    from autograder import strategies
    from autograder.engine import run_stage
    from autograder.submission import LocalTransport, Submission

    strategies.use_seed(seed)
    try:
        return run_stage(stage, Submission(LocalTransport(namespace, device), stage.label))
    finally:
        strategies.use_seed(None)


HIDDEN_FAILURE = "passes on the visible examples but fails on hidden ones (other sizes and seeds)"


def with_hidden(visible, hidden):
    """One stage result from the visible and the hidden run: a check keeps its visible
    result unless that passed and the hidden run did not. The hidden run's message names
    its inputs, so it is replaced by a plain one; its hint (the likely mistake) is kept."""
    from autograder.engine import CheckResult, StageResult

    by_code = {c.check.code: c for c in hidden.checks}
    checks = []
    for seen in visible.checks:
        other = by_code.get(seen.check.code)
        if seen.status == "passed" and other is not None and other.status != "passed":
            checks.append(CheckResult(seen.check, "failed" if other.status == "not_implemented" else other.status,
                                      HIDDEN_FAILURE, other.hint))
        else:
            checks.append(seen)
    return StageResult(visible.stage, checks, visible.seconds + hidden.seconds)


def hidden_text(result) -> str:
    """What the hidden call prints: the stage's score with hidden examples included, and the
    checks that fail only there (never the hidden inputs)."""
    from autograder.report import MARK

    points = f"{result.score:g}/{result.max_score:g}"
    lines = [f"{result.stage.label} with the hidden examples: {points} points (this cell's score)"]
    for c in result.checks:
        if c.message == HIDDEN_FAILURE:
            lines.append(f"  {MARK[c.status]} {c.check.code} {c.check.title}: {HIDDEN_FAILURE}")
    return "\n".join(lines)
