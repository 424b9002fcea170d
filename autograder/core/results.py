"""What a grading produced: each check's result, each stage's, and the whole report, with the
totals every front end shows. Built by :mod:`autograder.core.engine`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from autograder.core.chapter import Chapter, Stage
from autograder.core.checks import Check, CheckStatus
from autograder.core.failures import Hint, as_hint, hint_rank
from autograder.sandbox.settings import Settings


@dataclass
class CheckResult:
    """One check's outcome: its status, its message, its hint (``diagnosis``, read as ``hint`` at
    the course's ``hint_level``) and, when a drawn example failed, that example."""

    check: Check
    status: CheckStatus
    message: str = ""
    diagnosis: Hint | str | None = None  # plain words are taken as a Hint
    example: object = None  # the smallest failing example, when one was drawn (CheckFailure.example)
    # Whether the check read the examples seed (strategies.noting_seed_reads): one that did not
    # would repeat its visible run exactly on hidden examples. Unknown (not run) counts as read.
    seed_dependent: bool = True
    # The type of the exception the student's code raised (StudentCodeError.exc_type), if it did
    exception: str = ""
    # Passed on the visible examples and failed on hidden ones (engine.with_hidden)
    hidden_failure: bool = False
    hint_level: int = Settings.hint_level  # the engine's, from the settings it graded with

    def __post_init__(self):
        self.diagnosis = as_hint(self.diagnosis)

    @property
    def score(self) -> float:
        return self.check.points if self.status is CheckStatus.PASSED else 0.0

    @property
    def hint(self) -> str:
        return self.diagnosis.text(self.hint_level) if self.diagnosis else ""


@dataclass
class StageResult:
    """A stage's checks' results, in the chapter's order, and the seconds they took. Its
    ``status``, ``summary`` and ``hint`` are what the stage's row shows."""

    stage: Stage
    checks: list[CheckResult]
    seconds: float = 0.0
    # What the row must say about how the stage was graded ("graded with the book's
    # CausalAttention as its heads: ..."): Submission.notes
    notes: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Whole points, by one rule on every route (Classroom 50 records whole numbers): the
        stage's points when every check passed, else its checks' points rounded down and short
        of full (docs/grading.md, "Stages and points")."""
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
        """PASSED when every check passed; NOT_IMPLEMENTED when nothing was attempted yet;
        STOPPED when a time limit or an exit cut the stage short; FAILED otherwise."""
        if not self.failures:
            return CheckStatus.PASSED
        if all(c.status is CheckStatus.NOT_IMPLEMENTED for c in self.failures) and not self.score:
            return CheckStatus.NOT_IMPLEMENTED
        if any(c.status is CheckStatus.STOPPED for c in self.failures):
            return CheckStatus.STOPPED
        return CheckStatus.FAILED

    def _first_attempted_failure(self) -> CheckResult:
        """The failure the stage row shows: of the attempted ones, the one whose hint names the
        mistake most specifically (a diagnosis that fits one known mistake beats a generic
        hint or one that fits several), the first of equals."""
        attempted = [c for c in self.failures if c.status is not CheckStatus.NOT_IMPLEMENTED]
        if not attempted:
            return self.failures[0]
        best = max(hint_rank(c.diagnosis) for c in attempted)
        return next(c for c in attempted if hint_rank(c.diagnosis) == best)

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
    """A whole grading of one submission: each graded stage's result, the notebook's cells
    (how each ran) and output, the device, the worker's fences, the seconds it took, and
    ``error`` when it could not be graded at all. Its totals (``score``, ``bonus_score``, their
    maxima) and ``exit_code`` are the grade every front end reports."""

    chapter: Chapter
    submission: str
    stages: list[StageResult] = field(default_factory=list)
    device: str = "cpu"
    cells: list[dict] = field(default_factory=list)
    output: str = ""
    error: str = ""  # set when the submission could not be graded at all
    seconds: float = 0.0
    # The worker's fences, as it reported them (autograder.sandbox.confinement.describe: words)
    confinement: dict = field(default_factory=dict)
    # Graded on hidden examples too (Gradescope's bundle with a secret seed): each stage's result
    # over both runs (with_hidden). The stages above stay the visible ones, which students see.
    hidden_examples: dict[int, StageResult] = field(default_factory=dict)

    # The grade is out of 100: bonus stages (stage 8) are counted apart and never lower it.
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
        """0 for full marks: every graded stage passed, bonus stages aside unless only bonus
        stages were graded (``make test STAGE=8``)."""
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
