"""autograder.core.engine's report arithmetic: the bonus beside the 100 points."""

from __future__ import annotations

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.checks import CheckStatus
from autograder.core.engine import CheckResult, GradeReport, StageResult

STAGES = CHAPTER.stages
checks_for = CHAPTER.checks_for


def _report(stage8_passed: bool) -> GradeReport:
    results = [StageResult(s, [CheckResult(c, CheckStatus.PASSED if (not s.bonus or stage8_passed) else CheckStatus.FAILED, "m", "h")
                               for c in checks_for(s)]) for s in STAGES]
    return GradeReport(CHAPTER, submission="x.ipynb", stages=results)


def test_bonus_points_never_lower_the_grade():
    without, with_bonus = _report(stage8_passed=False), _report(stage8_passed=True)
    assert (without.score, without.max_score, without.bonus_score, without.exit_code) == (100, 100, 0, 0)
    assert (with_bonus.score, with_bonus.max_score, with_bonus.bonus_score) == (100, 100, 10)
    only_bonus = GradeReport(CHAPTER, submission="x", stages=[without.stages[-1]])
    assert only_bonus.exit_code == 1  # make test STAGE=8 says whether stage 8 passed
