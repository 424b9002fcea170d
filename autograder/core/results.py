"""What a grading produced: each check's result, each stage's, and the whole report, with the
totals every front end shows. Built by :mod:`autograder.core.engine`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from autograder.core.chapter import Chapter, Stage
from autograder.core.checks import Check, CheckStatus
from autograder.core.failures import Hint, as_hint, hint_rank
from autograder.sandbox.settings import Settings

MESSAGE_LIMIT = 2000  # characters of a check's message


@dataclass
class CheckResult:
    """One check's outcome; its hint (``diagnosis``) reads as ``hint`` at the grading's ``hint_level``."""

    check: Check
    status: CheckStatus
    message: str = ""
    diagnosis: Hint | str | None = None  # plain words are taken as a Hint
    example: object = None  # the smallest failing example, when one was drawn (CheckFailure.example)
    seed_dependent: bool = True  # read the examples seed: a run on hidden examples could differ
    exception: str = ""  # the type of the exception the student's code raised, if it did
    hidden_failure: bool = False  # passed on the visible examples, failed on hidden ones
    hint_level: int = Settings.hint_level  # the engine's, from the settings it graded with

    def __post_init__(self):
        self.diagnosis = as_hint(self.diagnosis)
        # one line of bounded length, whatever text of the student's it quotes (an exception's message)
        self.message = " ".join(self.message.splitlines())[:MESSAGE_LIMIT]

    @property
    def score(self) -> float:
        return self.check.points if self.status is CheckStatus.PASSED else 0.0

    @property
    def hint(self) -> str:
        return self.diagnosis.text(self.hint_level) if self.diagnosis else ""


@dataclass
class StageResult:
    """A stage's checks' results; ``status``, ``summary`` and ``hint`` are what its row shows."""

    stage: Stage
    checks: list[CheckResult]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Whole points on every route (Classroom 50 records whole numbers): the stage's when every
        check passed, else its checks' rounded down and short of full (docs/grading.md)."""
        if not self.failures:
            return self.max_score
        earned = sum(c.score for c in self.checks)
        return float(max(0, min(math.floor(earned + 1e-9), math.ceil(self.max_score) - 1)))

    @property
    def max_score(self) -> float:
        return sum(c.check.points for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status is not CheckStatus.PASSED]

    @property
    def status(self) -> CheckStatus:
        """PASSED, NOT_IMPLEMENTED (nothing attempted yet), STOPPED (a limit or an exit) or FAILED."""
        if not self.failures:
            return CheckStatus.PASSED
        if all(c.status is CheckStatus.NOT_IMPLEMENTED for c in self.failures) and not self.score:
            return CheckStatus.NOT_IMPLEMENTED
        if any(c.status is CheckStatus.STOPPED for c in self.failures):
            return CheckStatus.STOPPED
        return CheckStatus.FAILED

    def _first_attempted_failure(self) -> CheckResult:
        """The failure the row shows: of the attempted ones, the one whose hint is surest, the first of equals."""
        attempted = [c for c in self.failures if c.status is not CheckStatus.NOT_IMPLEMENTED]
        return max(attempted, key=lambda c: hint_rank(c.diagnosis)) if attempted else self.failures[0]

    @property
    def summary(self) -> str:
        if self.status is CheckStatus.NOT_IMPLEMENTED:
            return self.status.words
        noted = "".join(f" ({note})" for note in self.notes)
        if self.status is CheckStatus.PASSED:
            return f"all {len(self.checks)} checks passed{noted}"
        first = self._first_attempted_failure()
        return f"{first.check.id} {first.message}{noted}"

    @property
    def hint(self) -> str:
        """The row's hint as the student reads it."""
        return self.diagnosis.text(self.checks[0].hint_level) if self.diagnosis else ""

    @property
    def diagnosis(self) -> Hint | None:
        if self.status is CheckStatus.PASSED:
            return None
        if self.status is CheckStatus.NOT_IMPLEMENTED:
            return Hint(f"fill in the {self.stage.label} cell (replace `raise NotImplementedError`) and run it")
        return self._first_attempted_failure().diagnosis


@dataclass
class GradeReport:
    """A whole grading of one submission: each graded stage's result, the notebook's cells and output,
    the worker's fences, ``error`` when it could not be graded; its totals are the grade."""

    chapter: Chapter
    submission: str
    stages: list[StageResult] = field(default_factory=list)
    device: str = "cpu"
    cells: list[dict] = field(default_factory=list)
    error: str = ""  # set when the submission could not be graded at all
    seconds: float = 0.0
    confinement: dict = field(default_factory=dict)  # the worker's fences, as it reported them
    # each stage's result over the visible and hidden examples (with_hidden), where graded on both
    hidden_examples: dict[int, StageResult] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return sum(s.score for s in self.stages if not s.stage.bonus)

    @property
    def max_score(self) -> float:
        return sum(s.max_score for s in self.stages if not s.stage.bonus)

    @property
    def bonus_score(self) -> float:
        return sum(s.score for s in self.stages if s.stage.bonus)

    @property
    def bonus_max_score(self) -> float:
        return sum(s.max_score for s in self.stages if s.stage.bonus)

    @property
    def exit_code(self) -> int:
        """0 for full marks (the bonus aside, unless only bonus stages were graded), 2 for no grade."""
        if self.error:
            return 2
        counted = [s for s in self.stages if not s.stage.bonus] or self.stages
        return 0 if all(s.score == s.max_score for s in counted) else 1

    @property
    def cell_errors(self) -> list[dict]:
        return [c for c in self.cells if c.get("status") == "error"]

    @property
    def checks(self) -> list[CheckResult]:
        return [c for s in self.stages for c in s.checks]
