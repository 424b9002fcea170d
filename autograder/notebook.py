"""The notebook's test cells: ``grade_stage(4, globals())``.

Runs the same checks as ``make test`` on the objects in the kernel, prints every check of
the stage with its hint, and returns the points earned, which nbgrader reads as the cell's
partial credit. (``make test``, CI and ``make autograde`` grade in a separate sandboxed
process; this in-kernel path is for instant feedback while working.)
"""

from __future__ import annotations

IN_WORKER = False  # set by the grading worker: a submission's test cells must not grade


def grade_stage(number, namespace: dict, *, device: str = "cpu", seed: int | None = None):
    if IN_WORKER:
        return None
    from autograder import report, strategies
    from autograder.engine import run_stage
    from autograder.stages import stage as lookup
    from autograder.submission import LocalTransport, Submission

    stage = lookup(number)
    strategies.use_seed(seed)
    try:
        result = run_stage(stage, Submission(LocalTransport(namespace, device), stage.label))
    finally:
        strategies.use_seed(None)
    print(report.stage_text(result))
    return result.score
