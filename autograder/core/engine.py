"""Runs the checks of each stage against a submission and collects the results."""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Sequence
from contextlib import contextmanager

from autograder.core import strategies
from autograder.core.chapter import Chapter, Stage
from autograder.core.checks import CheckStatus
from autograder.core.failures import AMBIGUOUS, NAMED, CheckFailure, NotImplementedYet, StageAborted, hint_rank
from autograder.core.results import CheckResult, GradeReport, StageResult
from autograder.core.submission import LocalTransport, StageClock, Submission, torch_threads
from autograder.sandbox.errors import over_the_stage_time_limit
from autograder.sandbox.loader import SubmissionError, read_cells
from autograder.sandbox.settings import Settings
from autograder.sandbox.worker import Preload, Worker


def warm_up_checks() -> None:
    """What hypothesis imports on its first draws, imported before student code runs."""
    import hmac  # noqa: F401
    import secrets  # noqa: F401

    import numpy.random  # noqa: F401
    from hypothesis.strategies._internal import flatmapped  # noqa: F401


def check_preloads() -> tuple[Preload, ...]:
    """What the checks would import lazily, imported before the submission's first cell."""
    return (warm_up_checks,)


def call_policy_in_force(chapter: Chapter, stage: Stage, settings: Settings) -> bool:
    """Whether the stage refuses a library call of what it teaches (the instructor's settings may relax it)."""
    return chapter.parts(stage).call_policy is not None and not settings.allow_library_attention


def _policy_refusal(chapter: Chapter, stage: Stage, sub: Submission, settings: Settings) -> CheckFailure | StageAborted | None:
    """The policy's refusal, or the stop (a time limit, an exit) the student's code met under it."""
    if not call_policy_in_force(chapter, stage, settings):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chapter.parts(stage).call_policy(sub)
    except (CheckFailure, StageAborted) as refusal:
        return refusal
    return None


def run_stage(chapter: Chapter, stage: Stage, sub: Submission, *, examples_seed: int | None = None,
              only: frozenset[str] | None = None, settings: Settings | None = None) -> StageResult:
    """Every check of ``stage`` (or the ``only`` ones, by id); ``examples_seed`` draws other examples (the
    hidden tests). A stage whose code calls what it teaches earns no points (the chapter's call policy)."""
    settings = settings or Settings()
    started = time.monotonic()
    checks = [c for c in chapter.checks_for(stage) if only is None or c.id in only]
    results: list[CheckResult] = []
    aborted: StageAborted | None = None
    refusal = _policy_refusal(chapter, stage, sub, settings) if checks else None
    with strategies.examples_seed(examples_seed):
        for chk in checks:
            if isinstance(refusal, CheckFailure):
                result = CheckResult(chk, CheckStatus.FAILED, refusal.message, refusal.hint)
            elif aborted is not None:
                result = CheckResult(chk, CheckStatus.STOPPED, f"not run: {aborted.message}", aborted.hint)
            else:
                with strategies.noting_seed_reads() as seed_reads:
                    try:
                        if refusal is not None:  # the policy's run met a stop: the stage ends at its first check
                            raise refusal
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            chk.run(sub)
                        result = CheckResult(chk, CheckStatus.PASSED)
                    except NotImplementedYet as failure:
                        result = CheckResult(chk, CheckStatus.NOT_IMPLEMENTED, failure.message, failure.hint)
                    except CheckFailure as failure:
                        result = CheckResult(chk, CheckStatus.FAILED, failure.message, failure.hint, failure.example,
                                             exception=str(getattr(failure, "exc_type", "") or ""))
                    except StageAborted as stop:
                        aborted = stop
                        result = CheckResult(chk, CheckStatus.STOPPED, stop.message, stop.hint)
                    except Exception as exc:  # an output the check did not foresee: the grader's error is not the student's
                        result = CheckResult(chk, CheckStatus.FAILED, "the output could not be checked" + (
                            f" ({type(exc).__name__}: {str(exc)[:300]})" if settings.debug else ""),
                            "compare the output's type and shape with the docstring")
                result.seed_dependent = bool(seed_reads)
            result.hint_level = settings.hint_level
            results.append(result)
    return StageResult(stage, settle_ambiguous_hints(results), time.monotonic() - started,
                       list(getattr(sub, "notes", ())))


def checks_hidden_examples_could_fail(result: StageResult) -> frozenset[str]:
    """The checks worth a run on hidden examples: those that passed (a hidden run only takes points away)
    and read the examples seed (any other would repeat its visible run exactly)."""
    return frozenset(c.check.id for c in result.checks if c.status is CheckStatus.PASSED and c.seed_dependent)


def settle_ambiguous_hints(results: list[CheckResult]) -> list[CheckResult]:
    """A check whose output fits two known mistakes ("A; or, as likely here: B") names A alone
    when another check of the stage named A for certain: the stage's evidence settles it."""
    named = [c.diagnosis for c in results if hint_rank(c.diagnosis) == NAMED]
    for c in results:
        if hint_rank(c.diagnosis) == AMBIGUOUS:
            settled = [a for a in c.diagnosis.alternatives if any(h.same_advice(a) for h in named)]
            if len(settled) == 1:
                c.diagnosis = next(h for h in named if h.same_advice(settled[0]))
    return results


def grade_notebook_file(path: str, chapter: Chapter, stage_numbers: list | None = None, device: str = "cpu",
                        settings: Settings | None = None, worker=None, examples_seed: int | None = None,
                        close: bool = True, only: dict[int, frozenset[str]] | None = None,
                        preload: Sequence[Preload] | None = None) -> GradeReport:
    """Grade a submission file in the sandboxed worker (the CLI, CI and nbgrader path); ``only``: stage
    number -> the ids of the checks to run."""
    settings = settings or Settings()
    started = time.monotonic()
    report = GradeReport(chapter, submission=str(path), device=device)
    stages = chapter.select(stage_numbers)
    if worker is None:
        try:
            cells = read_cells(path)
        except SubmissionError as exc:
            return not_graded_report(chapter, str(path), str(exc), stage_numbers, device)
        worker = Worker(cells, device, settings, preload=check_preloads() if preload is None else preload)
    late, timed_out = over_the_stage_time_limit(settings.limits.stage_seconds).message, {}
    with torch_threads(1):
        try:
            for stage in stages:
                if not worker.alive:  # not yet, or the last stage ended it: load (again)
                    worker.start()
                if worker.loaded is not None:
                    report.cells, report.confinement = worker.loaded, worker.confinement
                worker.begin_stage(stage.number)
                sub = Submission(worker, stage.label, chapter.error_hints.get(stage.id, ()), report.cell_errors)
                sub.timed_out = dict(timed_out)  # a later stage builds on the book's class instead, not calling it
                result = run_stage(chapter, stage, sub, examples_seed=examples_seed,
                                   only=None if only is None else only.get(stage.number, frozenset()), settings=settings)
                worker.end_stage()
                if any(c.message == late for c in result.checks):
                    timed_out.update(dict.fromkeys(stage.names, stage.number))
                report.stages.append(result)
        except RuntimeError as exc:  # the worker could not start at all
            report.error = str(exc)
            done = {r.stage.number for r in report.stages}
            report.stages += [_not_graded(chapter, s, report.error) for s in stages if s.number not in done]
        finally:
            report.confinement = report.confinement or dict(getattr(worker, "confinement", None) or {})
            if close:
                worker.close()
    report.seconds = time.monotonic() - started
    return report


HIDDEN_FAILURE = "passes on the visible examples but fails on hidden ones (other sizes and seeds)"


def with_hidden(visible: StageResult, hidden: StageResult) -> StageResult:
    """A check keeps its visible result unless that passed and the hidden run's did not: then the hidden
    run's hint, under a plain message (the hidden run's names its inputs)."""
    by_id = {c.check.id: c for c in hidden.checks}
    checks = []
    for seen in visible.checks:
        other = by_id.get(seen.check.id)
        if seen.status is CheckStatus.PASSED and other is not None and other.status is not CheckStatus.PASSED:
            status = CheckStatus.FAILED if other.status is CheckStatus.NOT_IMPLEMENTED else other.status
            checks.append(CheckResult(seen.check, status, HIDDEN_FAILURE, other.diagnosis, exception=other.exception,
                                      hidden_failure=True, hint_level=other.hint_level))
        else:
            checks.append(seen)
    return StageResult(visible.stage, checks, visible.seconds + hidden.seconds,
                       list(dict.fromkeys(visible.notes + hidden.notes)))


def grade_with_hidden_examples(path: str, chapter: Chapter, stage_numbers: list | None, seeds: dict[int, int],
                               device: str = "cpu", settings: Settings | None = None, *, keep_outputs: bool = False,
                               preload: Sequence[Preload] | None = None) -> tuple[GradeReport, dict[int, StageResult]]:
    """The visible report, and each stage's result over it and one hidden run per distinct seed (``seeds``:
    stage number -> secret seed), in one loaded worker: the notebook runs once."""
    settings = settings or Settings()
    try:
        worker = Worker(read_cells(path), device, settings, keep_outputs=keep_outputs,
                        preload=check_preloads() if preload is None else preload)
    except SubmissionError:
        worker = None  # grade_notebook_file reports why
    try:
        visible = grade_notebook_file(path, chapter, stage_numbers, device, settings, worker=worker, close=False)
        combined = {r.stage.number: r for r in visible.stages}
        for seed in () if visible.error else sorted(set(seeds.values())):
            rerun = {n: ids for n, s in seeds.items()
                     if s == seed and n in combined and (ids := checks_hidden_examples_could_fail(combined[n]))}
            if not rerun:
                continue
            hidden = grade_notebook_file(path, chapter, sorted(rerun), device, settings, worker=worker,
                                         examples_seed=seed, close=False, only=rerun)
            for result in hidden.stages:
                combined[result.stage.number] = with_hidden(combined[result.stage.number], result)
    finally:
        if worker is not None:
            worker.close()
    return visible, combined


@contextmanager
def no_full_collection():
    """No full garbage collection inside: in a kernel a full pass walks all of torch and Jupyter."""
    before = gc.get_threshold()
    if before[0]:  # a threshold of 0 turns collection off: left so
        gc.set_threshold(before[0], before[1], 2**30)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def run_in_kernel(chapter: Chapter, stage: Stage, namespace: dict, device: str = "cpu",
                  examples_seed: int | None = None, only=None, *, settings: Settings | None = None) -> StageResult:
    """The stage's checks on a kernel's objects (a notebook's test cell), within the stage's time
    limit, on one thread and without full garbage collections."""
    settings = settings or Settings()
    with torch_threads(1) as kernel_threads, no_full_collection(), StageClock(settings.limits.stage_seconds) as clock:
        sub = Submission(LocalTransport(namespace, device, clock, threads=kernel_threads), stage.label,
                         chapter.error_hints.get(stage.id, ()))
        return run_stage(chapter, stage, sub, examples_seed=examples_seed, only=only, settings=settings)


def _not_graded(chapter: Chapter, stage: Stage, why: str) -> StageResult:
    return StageResult(stage, [CheckResult(c, CheckStatus.STOPPED, f"not graded: {why}")
                               for c in chapter.checks_for(stage)])


def not_graded_report(chapter: Chapter, submission: str, why: str, stage_numbers=None, device: str = "cpu") -> GradeReport:
    """A report that could not be graded at all: every selected check at 0, with the reason."""
    return GradeReport(chapter, submission, [_not_graded(chapter, s, why) for s in chapter.select(stage_numbers)],
                       device=device, error=why)
