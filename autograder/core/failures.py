"""What a check raises when a submission falls short, and the hint it carries for the student."""

from __future__ import annotations

from dataclasses import dataclass

# the sandbox finds out that a stage cannot go on, and owns the exception
from autograder.sandbox.errors import StageAborted as StageAborted

# how sure a hint is of the mistake it names: a stage's row shows the surest (GENERIC: an observation, advice;
# SEEN: read off the module itself, its layers and buffers, surer than a mistake deduced from outputs)
GENERIC, AMBIGUOUS, NAMED, SEEN, POLICY = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class Hint:
    """What is wrong, the code that fixes it (shown from hint level 2 on), the id of the mistake it
    names (snake_case, unique in its stage: the class report counts it) and how sure it is."""

    what: str
    fix: str = ""
    mistake: str = ""
    rank: int = GENERIC
    # AMBIGUOUS: the mistakes it could be, the first two said after ``what``
    alternatives: tuple[Hint, ...] = ()
    raised_at: str = ""  # the student's line that raised ("cell 12, line 4, in forward")

    def text(self, level: int = 1) -> str:
        """The hint as the student reads it: level 1 says what is wrong, level 2 adds the fix."""
        if self.alternatives:
            said = self.what + "; or, as likely here: ".join(a.text(level) for a in self.alternatives[:2])
        else:
            said = f"{self.what}: {self.fix}" if self.fix and level >= 2 else self.what
        return f"{said} (raised at {self.raised_at})" if self.raised_at else said

    def same_advice(self, other: Hint) -> bool:
        return (self.what, self.fix, self.alternatives) == (other.what, other.fix, other.alternatives)


def as_hint(hint: Hint | str | None) -> Hint | None:
    """Plain words are a hint with no fix that names no mistake; "" is none."""
    return Hint(hint) if isinstance(hint, str) and hint else (hint or None)


def hint_rank(hint: Hint | None) -> int:
    return hint.rank if hint else -1


class CheckFailure(Exception):
    """The submission gave a wrong answer (or none). ``hint`` names the likely mistake."""

    def __init__(self, message: str, hint: Hint | str = ""):
        super().__init__(message)
        self.message = message
        self.hint = as_hint(hint)
        # the smallest failing example, when a drawn example failed: the notebook's exhibit rebuilds it
        self.example = None


class NotImplementedYet(CheckFailure):
    """The student's code still raises NotImplementedError (the release's stub)."""

    def __init__(self, what: str):
        super().__init__(f"{what} is not implemented yet", "fill in the cell of this stage and run it")


class StudentCodeError(CheckFailure):
    """The student's code raised an exception while a check used it."""

    def __init__(self, message: str, hint: Hint | str = "", exc_type: str = "", exc_message: str = ""):
        super().__init__(message, hint)
        self.exc_type = exc_type
        self.exc_message = exc_message  # the exception's own message, as the worker reported it
