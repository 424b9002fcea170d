"""Runs the checks of each stage against a submission and collects the results."""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field

import torch

from autograder.core import strategies
from autograder.core.chapter import Chapter, Stage
from autograder.core.checks import Check, CheckStatus
from autograder.core.failures import CheckFailure, Diagnosis, NotImplementedYet, StageAborted, hint_rank
from autograder.core.submission import Submission
from autograder.sandbox.client import BEFORE_STUDENT_CODE


def _preload_checks() -> None:
    """What hypothesis imports on its first draws (see client.BEFORE_STUDENT_CODE)."""
    import hmac  # noqa: F401
    import secrets  # noqa: F401

    import numpy.random  # noqa: F401
    from hypothesis.strategies._internal import flatmapped  # noqa: F401


BEFORE_STUDENT_CODE.append(_preload_checks)


@dataclass
class CheckResult:
    check: Check
    status: CheckStatus
    message: str = ""
    hint: str = ""
    example: object = None  # the smallest failing example's sizes, when one was drawn (CheckFailure.example)
    # Whether the check read the examples seed (strategies.noting_seed_reads): one that did not
    # would repeat its visible run exactly on hidden examples. Unknown (not run) counts as read.
    seed_dependent: bool = True

    @property
    def score(self) -> float:
        return self.check.points if self.status is CheckStatus.PASSED else 0.0


@dataclass
class StageResult:
    stage: Stage
    checks: list[CheckResult]
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

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
        best = max(hint_rank(c.hint) for c in attempted)
        return next(c for c in attempted if hint_rank(c.hint) == best)

    @property
    def summary(self) -> str:
        if self.status is CheckStatus.PASSED:
            return f"all {len(self.checks)} checks passed"
        if self.status is CheckStatus.NOT_IMPLEMENTED:
            return self.status.words
        first = self._first_attempted_failure()
        return f"{first.check.id} {first.message}"

    @property
    def hint(self) -> str:
        if self.status is CheckStatus.PASSED:
            return ""
        if self.status is CheckStatus.NOT_IMPLEMENTED:
            return f"fill in the {self.stage.label} cell (replace `raise NotImplementedError`) and run it"
        return self._first_attempted_failure().hint


# The one setting that relaxes a chapter's call policy (stages accept a library call of what
# they teach, such as F.scaled_dot_product_attention in stages 3-7): set to 1 in the grader's
# environment, by the instructor. Read by the grading process, never by the student's code.
ALLOW_LIBRARY_ATTENTION = "AUTOGRADER_ALLOW_LIBRARY_ATTENTION"


def call_policy_in_force(chapter: Chapter) -> bool:
    return chapter.call_policy is not None and os.environ.get(ALLOW_LIBRARY_ATTENTION, "") not in ("1", "true", "yes")


def _policy_refusal(chapter: Chapter, stage: Stage, sub: Submission) -> CheckFailure | StageAborted | None:
    """The policy's refusal, or the stop (a time limit, an exit) the student's code met while
    the policy ran it, which ends the stage as it would in a check."""
    if not call_policy_in_force(chapter):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chapter.call_policy(sub, stage)
    except (CheckFailure, StageAborted) as refusal:
        return refusal
    return None


def run_stage(chapter: Chapter, stage: Stage, sub: Submission, *, examples_seed: int | None = None,
              only: frozenset[str] | None = None) -> StageResult:
    """Every check of ``stage`` (or the ``only`` ones, by id); ``examples_seed`` draws other
    examples (nbgrader's hidden tests). A stage whose code calls what it teaches (the chapter's
    call policy) earns no points: every check fails with the policy's message."""
    started = time.monotonic()
    checks = [c for c in chapter.checks_for(stage) if only is None or c.id in only]
    results: list[CheckResult] = []
    aborted: StageAborted | None = None
    refusal = _policy_refusal(chapter, stage, sub) if checks else None
    if isinstance(refusal, StageAborted):
        aborted, refusal = refusal, None
        results.append(CheckResult(checks[0], CheckStatus.STOPPED, aborted.message, aborted.hint))
    with strategies.examples_seed(examples_seed):
        for chk in checks[len(results):]:
            if refusal is not None:
                results.append(CheckResult(chk, CheckStatus.FAILED, refusal.message, refusal.hint))
                continue
            if aborted is not None:
                results.append(CheckResult(chk, CheckStatus.STOPPED, f"not run: {aborted.message}", aborted.hint))
                continue
            with strategies.noting_seed_reads() as seed_reads:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        chk.run(sub)
                    result = CheckResult(chk, CheckStatus.PASSED)
                except NotImplementedYet as failure:
                    result = CheckResult(chk, CheckStatus.NOT_IMPLEMENTED, failure.message, failure.hint)
                except CheckFailure as failure:
                    result = CheckResult(chk, CheckStatus.FAILED, failure.message, failure.hint, failure.example)
                except StageAborted as stop:
                    aborted = stop
                    result = CheckResult(chk, CheckStatus.STOPPED, stop.message, stop.hint)
                except Exception as exc:  # an output the check did not foresee
                    result = CheckResult(
                        chk, CheckStatus.FAILED,
                        f"the output could not be checked ({type(exc).__name__}: {str(exc)[:300]})",
                        "compare the output's type and shape with the docstring")
            result.seed_dependent = bool(seed_reads)
            results.append(result)
    return StageResult(stage, _settle_ambiguous_hints(results), time.monotonic() - started)


def checks_hidden_examples_could_fail(result: StageResult) -> frozenset[str]:
    """The checks of a visible stage result worth a run on hidden examples: those that passed (a
    hidden run only takes points away) and read the examples seed (any other would repeat its
    visible run exactly, and so its result)."""
    return frozenset(c.check.id for c in result.checks if c.status is CheckStatus.PASSED and c.seed_dependent)


def _settle_ambiguous_hints(results: list[CheckResult]) -> list[CheckResult]:
    """A check whose output fits two known mistakes ("A; or, as likely here: B") names A alone
    when another check of the stage named A for certain: the stage's evidence settles it, and
    the student reads one hint instead of variations of it."""
    named = {c.hint for c in results if hint_rank(c.hint) == Diagnosis.NAMED}
    for c in results:
        if hint_rank(c.hint) == Diagnosis.AMBIGUOUS:
            settled = [a for a in getattr(c.hint, "alternatives", ()) if a in named]
            if len(settled) == 1:
                c.hint = next(h for h in named if h == settled[0])
    return results


@dataclass
class GradeReport:
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


def grade_notebook_file(path: str, chapter: Chapter, stage_numbers: list | None = None, device: str = "cpu",
                        limits=None, worker=None, examples_seed: int | None = None,
                        close: bool = True, only: dict[int, frozenset[str]] | None = None) -> GradeReport:
    """Grade a submission file in the sandboxed worker (the CLI, CI and nbgrader path).

    ``worker``: a :class:`~autograder.sandbox.client.Worker` for this file, maybe prestarted
    (see ``cli._prestart``); grading loads the submission into it and closes it (unless not
    ``close``: another run, on hidden examples, then uses the same loaded worker). ``only``: stage
    number -> the ids of the checks to run (a run on hidden examples)."""
    from autograder.sandbox.client import Limits, Worker
    from autograder.sandbox.loader import SubmissionError, read_cells

    started = time.monotonic()
    report = GradeReport(chapter, submission=str(path), device=device)
    stages = chapter.select(stage_numbers)
    if worker is None:
        try:
            cells = read_cells(path)
        except SubmissionError as exc:
            report.error = str(exc)
            report.stages = [_not_graded(chapter, s, report.error) for s in stages]
            return report
        worker = Worker(cells, device, limits or Limits())
    threads = _one_thread()
    try:
        for stage in chapter.grading_order(stages):
            if worker.needs_start:
                worker.start()
            if worker.report is not None:
                load = worker.report
                report.cells, report.output, report.confinement = load.cells, report.output or load.output, load.confinement
            worker.begin_stage(stage.number)
            sub = Submission(worker, stage.label, chapter.error_hints.get(stage.id, ()))
            result = run_stage(chapter, stage, sub, examples_seed=examples_seed,
                               only=None if only is None else only.get(stage.number, frozenset()))
            worker.end_stage()
            _point_at_cell_errors(result, report.cell_errors)
            report.stages.append(result)
    except RuntimeError as exc:  # the worker could not start at all
        report.error = str(exc)
        done = {r.stage.number for r in report.stages}
        report.stages += [_not_graded(chapter, s, report.error) for s in stages if s.number not in done]
    finally:
        report.stages.sort(key=lambda result: stages.index(result.stage))
        report.confinement = report.confinement or dict(getattr(worker, "confinement", None) or {})
        if close:
            worker.close()
        torch.set_num_threads(threads)
    report.seconds = time.monotonic() - started
    return report


HIDDEN_FAILURE = "passes on the visible examples but fails on hidden ones (other sizes and seeds)"


def with_hidden(visible: StageResult, hidden: StageResult) -> StageResult:
    """One stage result from the visible and the hidden run: a check keeps its visible
    result unless that passed and the hidden run did not. The hidden run's message names
    its inputs, so it is replaced by a plain one; its hint (the likely mistake) is kept."""
    by_id = {c.check.id: c for c in hidden.checks}
    checks = []
    for seen in visible.checks:
        other = by_id.get(seen.check.id)
        if seen.status is CheckStatus.PASSED and other is not None and other.status is not CheckStatus.PASSED:
            status = CheckStatus.FAILED if other.status is CheckStatus.NOT_IMPLEMENTED else other.status
            checks.append(CheckResult(seen.check, status, HIDDEN_FAILURE, other.hint))
        else:
            checks.append(seen)
    return StageResult(visible.stage, checks, visible.seconds + hidden.seconds)


def grade_with_hidden_examples(path: str, chapter: Chapter, stage_numbers: list | None, seeds: dict[int, int],
                               device: str = "cpu", limits=None, *, worker=None, keep_outputs: bool = False,
                               ) -> tuple[GradeReport, dict[int, StageResult]]:
    """The visible grading, then one run on hidden examples per distinct seed (``seeds``: stage
    number -> secret seed) of the checks it could fail (:func:`checks_hidden_examples_could_fail`),
    all in one loaded worker: the notebook runs once. Returns the visible
    report and each graded stage's result over both runs (:func:`with_hidden`); with
    ``keep_outputs``, the report's cells carry what each printed (nbgrader stores it);
    ``worker``: one already started for this file (the CLI's)."""
    from autograder.sandbox.client import Limits, Worker
    from autograder.sandbox.loader import SubmissionError, read_cells

    if worker is None:
        try:
            worker = Worker(read_cells(path), device, limits or Limits(), keep_outputs=keep_outputs)
        except SubmissionError:
            pass  # grade_notebook_file reports why
    try:
        visible = grade_notebook_file(path, chapter, stage_numbers, device, limits, worker=worker, close=False)
        combined = {r.stage.number: r for r in visible.stages}
        for seed in sorted(set(seeds.values())):
            rerun = {n: checks_hidden_examples_could_fail(combined[n]) for n, s in seeds.items()
                     if s == seed and n in combined}
            rerun = {n: ids for n, ids in rerun.items() if ids}
            if not rerun or visible.error:
                continue
            hidden = grade_notebook_file(path, chapter, sorted(rerun), device, limits, worker=worker,
                                         examples_seed=seed, close=False, only=rerun)
            for result in hidden.stages:
                combined[result.stage.number] = with_hidden(combined[result.stage.number], result)
    finally:
        if worker is not None:
            worker.close()
    return visible, combined


def _one_thread() -> int:
    """The grader's own tensors are small (the largest reference is one 1024-token sequence),
    so it computes on one thread; a second OpenMP thread would spin after each parallel region
    on the core the worker needs while the grader waits for it. Returns the previous count."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    return before


def _not_graded(chapter: Chapter, stage: Stage, why: str) -> StageResult:
    return StageResult(stage, [CheckResult(c, CheckStatus.STOPPED, f"not graded: {why}")
                               for c in chapter.checks_for(stage)])


def not_graded_report(chapter: Chapter, submission: str, why: str, stage_numbers=None) -> GradeReport:
    """A report that could not be graded at all: every selected check at 0, with the reason."""
    report = GradeReport(chapter, submission=submission, error=why)
    report.stages = [_not_graded(chapter, s, why) for s in chapter.select(stage_numbers)]
    return report


def _point_at_cell_errors(result: StageResult, cell_errors: list[dict]) -> None:
    """A missing name is often a cell that failed to run: say which one."""
    if not cell_errors:
        return
    first = cell_errors[0]
    error = first.get("error", {})
    note = (f"cell {first['index']} raised {error.get('type') or 'an error'} when the notebook ran "
            f"({error.get('message', '')[:120]}); fix it first")
    for check in result.checks:
        if check.status is CheckStatus.FAILED and "is not defined" in check.message:
            check.hint = f"{check.hint}; {note}" if check.hint else note
