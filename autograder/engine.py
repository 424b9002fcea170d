"""Runs the checks of each stage against a submission and collects the results."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import torch

from autograder.checks import Check, checks_for
from autograder.failures import CheckFailure, NotImplementedYet, StageAborted
from autograder.stages import STAGES, Stage
from autograder.submission import Submission


@dataclass
class CheckResult:
    check: Check
    status: str  # passed | failed | not_implemented | stopped
    message: str = ""
    hint: str = ""

    @property
    def score(self) -> float:
        return self.check.points if self.status == "passed" else 0.0


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
        return [c for c in self.checks if c.status != "passed"]

    @property
    def status(self) -> str:
        if not self.failures:
            return "passed"
        if all(c.status == "not_implemented" for c in self.failures) and not self.score:
            return "not implemented yet"
        if any(c.status == "stopped" for c in self.failures):
            return "stopped"
        return "failed"

    @property
    def summary(self) -> str:
        if self.status == "passed":
            return f"all {len(self.checks)} checks passed"
        if self.status == "not implemented yet":
            return "not implemented yet"
        first = next(c for c in self.failures if c.status != "not_implemented") \
            if any(c.status != "not_implemented" for c in self.failures) else self.failures[0]
        return f"{first.check.code} {first.message}"

    @property
    def hint(self) -> str:
        if self.status == "passed":
            return ""
        if self.status == "not implemented yet":
            return f"fill in the {self.stage.label} cell (replace `raise NotImplementedError`) and run it"
        first = next((c for c in self.failures if c.status != "not_implemented"), self.failures[0])
        return first.hint


def run_stage(stage: Stage, sub: Submission) -> StageResult:
    started = time.monotonic()
    results: list[CheckResult] = []
    aborted: StageAborted | None = None
    for chk in checks_for(stage):
        if aborted is not None:
            results.append(CheckResult(chk, "stopped", f"not run: {aborted.message}", aborted.hint))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                chk.run(sub)
            results.append(CheckResult(chk, "passed"))
        except NotImplementedYet as failure:
            results.append(CheckResult(chk, "not_implemented", failure.message, failure.hint))
        except CheckFailure as failure:
            results.append(CheckResult(chk, "failed", failure.message, failure.hint))
        except StageAborted as stop:
            aborted = stop
            results.append(CheckResult(chk, "stopped", stop.message, stop.hint))
        except Exception as exc:  # noqa: BLE001 - an output the check did not foresee
            results.append(CheckResult(chk, "failed", f"the output could not be checked ({type(exc).__name__}: "
                                       f"{str(exc)[:300]})", "compare the output's type and shape with the "
                                       "docstring"))
    return StageResult(stage, results, time.monotonic() - started)


def select_stages(numbers: list | None) -> list[Stage]:
    if not numbers:
        return list(STAGES)
    from autograder.stages import stage as lookup

    wanted = {lookup(n).number for n in numbers}
    return [s for s in STAGES if s.number in wanted]


@dataclass
class GradeReport:
    submission: str
    stages: list[StageResult] = field(default_factory=list)
    device: str = "cpu"
    cells: list[dict] = field(default_factory=list)
    output: str = ""
    error: str = ""  # set when the submission could not be graded at all
    seconds: float = 0.0

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


def grade_notebook_file(path: str, stage_numbers: list | None = None, device: str = "cpu", limits=None,
                        worker=None) -> GradeReport:
    """Grade a submission file in the sandboxed worker (the CLI, CI and nbgrader path).

    ``worker``: a :class:`~autograder.sandbox.Worker` for this file, maybe prestarted
    (see ``cli._prestart``); grading loads the submission into it and closes it."""
    from autograder.loader import SubmissionError, read_cells
    from autograder.sandbox import Limits, Worker

    started = time.monotonic()
    report = GradeReport(submission=str(path), device=device)
    stages = select_stages(stage_numbers)
    if worker is None:
        try:
            cells = read_cells(path)
        except SubmissionError as exc:
            report.error = str(exc)
            report.stages = [_not_graded(s, report.error) for s in stages]
            return report
        worker = Worker(cells, device, limits or Limits())
    threads = _one_thread()
    try:
        for stage in stages:
            if worker.needs_start:
                load = worker.start()
                report.cells, report.output = load.cells, report.output or load.output
            worker.begin_stage(stage.number)
            result = run_stage(stage, Submission(worker, stage.label))
            _point_at_cell_errors(result, report.cell_errors)
            report.stages.append(result)
    except RuntimeError as exc:  # the worker could not start at all
        report.error = str(exc)
        done = {r.stage.number for r in report.stages}
        report.stages += [_not_graded(s, report.error) for s in stages if s.number not in done]
    finally:
        worker.close()
        torch.set_num_threads(threads)
    report.seconds = time.monotonic() - started
    return report


def _one_thread() -> int:
    """The grader's own tensors are small (the largest reference is one 1024-token sequence),
    so it computes on one thread; a second OpenMP thread would spin after each parallel region
    on the core the worker needs while the grader waits for it. Returns the previous count."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    return before


def _not_graded(stage: Stage, why: str) -> StageResult:
    return StageResult(stage, [CheckResult(c, "stopped", f"not graded: {why}") for c in checks_for(stage)])


def not_graded_report(submission: str, why: str, stage_numbers=None) -> GradeReport:
    """A report that could not be graded at all: every selected check at 0, with the reason."""
    report = GradeReport(submission=submission, error=why)
    report.stages = [_not_graded(s, why) for s in select_stages(stage_numbers)]
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
        if check.status == "failed" and "is not defined" in check.message:
            check.hint = f"{check.hint}; {note}" if check.hint else note
