"""What a check raises when a submission falls short. Each carries a hint for the student."""

from __future__ import annotations

# The sandbox finds out that a stage cannot go on and owns the exception (the lowest layer
# owns what it raises); the checks and the engine catch it from here.
from autograder.sandbox.errors import StageAborted

__all__ = ["CheckFailure", "Diagnosis", "NotImplementedYet", "StageAborted", "StudentCodeError", "hint_rank"]


class CheckFailure(Exception):
    """The submission gave a wrong answer (or none). ``hint`` names the likely mistake."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint
        # the smallest failing example (a strategies.Example), when a drawn example failed: the
        # notebook's feedback hands it to the stage's exhibit, which rebuilds it to draw a picture
        self.example = None


class NotImplementedYet(CheckFailure):
    """The student's code still raises NotImplementedError (the release's stub)."""

    def __init__(self, what: str):
        super().__init__(f"{what} is not implemented yet", "fill in the cell of this stage and run it")


class StudentCodeError(CheckFailure):
    """The student's code raised an exception while a check used it."""

    def __init__(self, message: str, hint: str = "", exc_type: str = "", exc_message: str = ""):
        super().__init__(message, hint)
        self.exc_type = exc_type
        self.exc_message = exc_message  # the exception's own message, as the worker reported it


class Diagnosis(str):
    """A hint that names the mistake behind a failure, with how sure the grader is of it. When
    several checks of one stage fail, the stage shows the most specific hint (engine)."""

    GENERIC, AMBIGUOUS, NAMED, POLICY = 0, 1, 2, 3

    def __new__(cls, text: str, rank: int, alternatives: tuple[str, ...] = (), mistake: str = ""):
        hint = super().__new__(cls, text)
        hint.rank = rank
        hint.alternatives = alternatives  # AMBIGUOUS: the hints of the mistakes it could be
        # NAMED: a stable id of the mistake (snake_case, unique within its stage), which the
        # class report counts; AMBIGUOUS: the candidates' ids joined by "|"
        hint.mistake = mistake
        return hint

    def __reduce__(self):  # crosses process boundaries (the catalog's pool) whole
        return Diagnosis, (str(self), self.rank, self.alternatives, self.mistake)


def hint_rank(hint: str) -> int:
    return getattr(hint, "rank", Diagnosis.GENERIC) if hint else -1
