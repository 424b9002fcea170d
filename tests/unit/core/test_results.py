"""The result types (autograder.core.results): totals and statuses from hand-built results."""

from __future__ import annotations

import pytest
from support import chapter_of, every_declared_stage

from autograder.chapters.ch03_attention import CHAPTER as COURSE_CH03
from autograder.core.chapter import Stage
from autograder.core.checks import Check, CheckStatus
from autograder.core.failures import NAMED, SEEN, Hint
from autograder.core.results import CheckResult, GradeReport, StageResult

ONE = Stage(1, "one", "Stage one", ("f",))
TWO = Stage(2, "two", "Stage two", ("g",))
BONUS = Stage(8, "extra", "Bonus", ("h",), bonus=True)
CHAPTER = chapter_of("toy_results", (ONE, TWO, BONUS))


def _check(stage: Stage, k: int, points: float) -> Check:
    return Check(stage, f"{stage.number}.{k}", f"check {k}", points, lambda sub: None)


def _stage(stage: Stage, *outcomes: tuple[float, CheckStatus]) -> StageResult:
    return StageResult(stage, [CheckResult(_check(stage, k, points), status)
                               for k, (points, status) in enumerate(outcomes, 1)])


P, F, N, S = CheckStatus.PASSED, CheckStatus.FAILED, CheckStatus.NOT_IMPLEMENTED, CheckStatus.STOPPED


def test_a_check_scores_its_points_only_when_it_passed():
    assert CheckResult(_check(ONE, 1, 3), P).score == 3
    for status in (F, N, S):
        assert CheckResult(_check(ONE, 1, 3), status).score == 0


def test_the_grade_counts_graded_stages_and_keeps_the_bonus_apart():
    report = GradeReport(CHAPTER, "x.ipynb", stages=[
        _stage(ONE, (10, P), (5, F)),
        _stage(TWO, (20, P), (15, P)),
        _stage(BONUS, (7, P), (3, F)),
    ])
    assert (report.score, report.max_score) == (45, 50)
    assert (report.bonus_score, report.bonus_max_score) == (7, 10)
    assert report.exit_code == 1  # stage one lost points
    assert [c.check.id for c in report.checks] == ["1.1", "1.2", "2.1", "2.2", "8.1", "8.2"]


def test_full_marks_exit_0_whatever_the_bonus_and_an_error_exits_2():
    full = GradeReport(CHAPTER, "x", stages=[_stage(ONE, (10, P)), _stage(BONUS, (7, F))])
    assert full.exit_code == 0
    assert GradeReport(CHAPTER, "x", stages=[_stage(ONE, (10, P))], error="no worker").exit_code == 2
    # only bonus stages graded (make test STAGE=8): the bonus is what counts
    assert GradeReport(CHAPTER, "x", stages=[_stage(BONUS, (7, F))]).exit_code == 1
    assert GradeReport(CHAPTER, "x", stages=[_stage(BONUS, (7, P))]).exit_code == 0


def test_cell_errors_are_the_cells_that_raised():
    report = GradeReport(CHAPTER, "x", cells=[{"index": 1, "status": "ok"}, {"index": 2, "status": "error"}])
    assert report.cell_errors == [{"index": 2, "status": "error"}]


def test_a_stage_status_from_its_checks():
    assert _stage(ONE, (1, P), (1, P)).status is P
    assert _stage(ONE, (1, N), (1, N)).status is N
    assert _stage(ONE, (1, P), (1, N)).status is F  # something was attempted and scored
    assert _stage(ONE, (1, F), (1, S)).status is S
    assert _stage(ONE, (1, P), (1, F)).status is F
    assert _stage(ONE, (1, P), (2, F)).max_score == 3


def test_the_stage_row_shows_the_most_specific_hint_of_the_attempted_failures():
    result = _stage(ONE, (1, N), (1, F), (1, F), (1, F))
    result.checks[1].diagnosis = Hint("generic")
    result.checks[2].diagnosis = Hint("named", rank=NAMED)
    result.checks[2].message = "is off"
    result.checks[3].diagnosis = Hint("also named", rank=NAMED)
    assert result.hint == "named"
    assert result.summary == "1.3 is off"
    assert _stage(ONE, (1, P), (1, P)).summary == "all 2 checks passed"
    assert "fill in the Stage 1 (one) cell" in _stage(ONE, (1, N)).hint


def test_a_structure_finding_outranks_a_mistake_deduced_from_outputs():
    """The book example's guess ("not the book's weights: create them in this order") or a mistake
    read from outputs loses to what the structure check saw in the module ("W_query has a bias")."""
    result = _stage(ONE, (1, F), (1, F), (1, F))
    result.checks[0].diagnosis = Hint("the weights are not the book's")
    result.checks[1].diagnosis = Hint("forward ignores the weights", rank=NAMED)
    result.checks[2].diagnosis = Hint("W_query has a bias", rank=SEEN)
    assert result.hint == "W_query has a bias"


# the real chapter's checks: graded stages and a bonus stage beside them, whatever the course
CH03 = every_declared_stage(COURSE_CH03)
BONUS_MAX = sum(CH03.points(s) for s in CH03.stages if s.bonus)


def _ch03_report(stage8_passed: bool) -> GradeReport:
    results = [StageResult(s, [CheckResult(c, CheckStatus.PASSED if (not s.bonus or stage8_passed) else CheckStatus.FAILED, "m", "h")
                               for c in CH03.checks_for(s)]) for s in CH03.stages]
    return GradeReport(CH03, submission="x.ipynb", stages=results)


def test_bonus_points_never_lower_the_grade():
    if not any(s.bonus for s in COURSE_CH03.stages):
        pytest.skip("the course has no bonus stage")
    without, with_bonus = _ch03_report(stage8_passed=False), _ch03_report(stage8_passed=True)
    full = CH03.max_score
    assert BONUS_MAX > 0 and full > 0
    assert (without.score, without.max_score, without.bonus_score, without.exit_code) == (full, full, 0, 0)
    assert (with_bonus.score, with_bonus.max_score, with_bonus.bonus_score) == (full, full, BONUS_MAX)
    only_bonus = GradeReport(CH03, submission="x", stages=[r for r in without.stages if r.stage.bonus])
    assert only_bonus.exit_code == 1  # make test STAGE=8 says whether stage 8 passed
