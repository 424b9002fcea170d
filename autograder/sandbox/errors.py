"""What the sandbox raises when a stage cannot go on (:class:`StageAborted`); core.failures
re-exports it for the checks and the engine."""

from __future__ import annotations


class StageAborted(Exception):
    """The worker running the student's code died or timed out; the stage cannot go on."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


def ended_the_stage(why: str | None = None) -> StageAborted:
    """The stop when the stage's process is gone: ``why`` when the grader ended it, else the submission did."""
    if why:
        return StageAborted(why, "write large files nowhere, or far smaller ones; nothing needs more than a few MB")
    return StageAborted(
        "the submission ended the grading process during this stage",
        "remove sys.exit / os._exit / exit() calls; a crash inside PyTorch can also cause "
        "this (very large tensors?)")


def over_the_stage_time_limit(seconds: float) -> StageAborted:
    """The stop when a stage's checks ran past their time limit, in the worker and the test cell alike."""
    return StageAborted(
        f"stopped after {seconds:g} s, the time limit of a stage",
        "an endless loop, or code far slower than it should be (Python loops over "
        "tensor elements?)")
