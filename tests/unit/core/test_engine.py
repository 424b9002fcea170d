"""The engine's pure helpers (autograder.core.engine): no worker runs here."""

from __future__ import annotations

import sys

from support import chapter_of

from autograder.core import engine
from autograder.core.chapter import Stage
from autograder.core.checks import CheckStatus, check
from autograder.core.failures import AMBIGUOUS, NAMED, Hint
from autograder.core.results import CheckResult, StageResult

ONE = Stage(1, "one", "Stage one", ("f",))
TWO = Stage(2, "two", "Stage two", ("g",))


@check("1.1", 2, "first")
def first(sub): ...


@check("1.2", 3, "second")
def second(sub): ...


@check("2.1", 5, "third")
def third(sub): ...


CHAPTER = chapter_of("toy_engine", (ONE, TWO), first, second, third)


P, F, N, S = CheckStatus.PASSED, CheckStatus.FAILED, CheckStatus.NOT_IMPLEMENTED, CheckStatus.STOPPED


def _result(stage: Stage, *statuses: CheckStatus, seconds: float = 1.0) -> StageResult:
    return StageResult(stage, [CheckResult(c, s, f"message {c.id}", f"hint {c.id}")
                               for c, s in zip(CHAPTER.checks_for(stage), statuses)], seconds)


def test_the_chapter_of_this_module_has_its_checks():
    assert [c.id for c in CHAPTER.checks_for(ONE)] == ["1.1", "1.2"]


def test_hidden_examples_rerun_only_passed_checks_that_read_the_seed():
    result = _result(ONE, P, P)
    assert engine.checks_hidden_examples_could_fail(result) == {"1.1", "1.2"}
    result.checks[1].seed_dependent = False
    assert engine.checks_hidden_examples_could_fail(result) == {"1.1"}
    assert engine.checks_hidden_examples_could_fail(_result(ONE, F, N)) == frozenset()


def test_with_hidden_takes_points_only_from_checks_that_passed_and_then_failed():
    visible, hidden = _result(ONE, P, F, seconds=1.0), _result(ONE, F, P, seconds=2.0)
    combined = engine.with_hidden(visible, hidden)
    assert [c.status for c in combined.checks] == [F, F]
    assert combined.checks[0].message == engine.HIDDEN_FAILURE  # the hidden inputs stay hidden
    assert combined.checks[0].hint == "hint 1.1"  # the likely mistake is kept
    assert combined.checks[1] is visible.checks[1]
    assert combined.seconds == 3.0


def test_with_hidden_reports_an_unimplemented_hidden_run_as_failed_and_a_stop_as_stopped():
    combined = engine.with_hidden(_result(ONE, P, P), _result(ONE, N, S))
    assert [c.status for c in combined.checks] == [F, S]
    kept = engine.with_hidden(_result(ONE, P, P), StageResult(ONE, []))  # not rerun: visible stays
    assert [c.status for c in kept.checks] == [P, P]


def test_not_graded_report_gives_every_selected_check_zero_and_the_reason():
    report = engine.not_graded_report(CHAPTER, "x.ipynb", "no device", [2])
    assert report.error == "no device" and report.exit_code == 2
    assert [(c.check.id, c.status, c.message) for c in report.checks] == [("2.1", S, "not graded: no device")]
    everything = engine.not_graded_report(CHAPTER, "x.ipynb", "why")
    assert [c.check.id for c in everything.checks] == ["1.1", "1.2", "2.1"]
    assert (everything.score, everything.max_score) == (0, 10)


def test_an_ambiguous_hint_settles_on_the_mistake_another_check_named():
    a, b = Hint("mistake A", "a()", "a", NAMED), Hint("mistake B", "b()", "b", NAMED)
    either = Hint("", rank=AMBIGUOUS, alternatives=(Hint("mistake A", "a()", "a2", NAMED), b), mistake="a2|b")
    results = _result(ONE, F, F).checks
    results[0].diagnosis, results[1].diagnosis = a, either
    engine.settle_ambiguous_hints(results)
    assert results[1].diagnosis is a and results[1].hint == "mistake A"
    # both named elsewhere, or neither: the evidence settles nothing
    results = [*_result(ONE, F, F).checks, *_result(TWO, F).checks]
    results[0].diagnosis, results[1].diagnosis, results[2].diagnosis = a, b, either
    engine.settle_ambiguous_hints(results)
    assert results[2].diagnosis is either


def test_cell_errors_are_named_beside_a_missing_name():
    from autograder.core.submission import Submission

    cell_errors = [{"index": 4, "error": {"type": "ValueError", "message": "bad"}}]
    missing = Submission(None, "Stage 1 (one)", (), cell_errors).not_defined("f", "define f")
    assert missing.message == "`f` is not defined" and "cell 4 raised ValueError" in missing.hint.text()
    raised = Submission(None, "", (), cell_errors)._failure({"type": "NameError", "message": "name 'g' is not defined",
                                                              "where": "cell 5, line 1"}, "f(x)")
    assert "cell 4 raised ValueError" in raised.hint.text() and raised.hint.raised_at == "cell 5, line 1"
    assert Submission(None, "").not_defined("f", "define f").hint == Hint("define f")


def test_the_engine_preloads_what_its_checks_import_lazily():
    assert engine.check_preloads() == (engine.warm_up_checks,)
    engine.warm_up_checks()
    assert "hypothesis.strategies._internal.flatmapped" in sys.modules


# -- two lanes (engine._grade_on_two_lanes): the rule that keeps a lane from changing a grade ----
class _FakeLane:
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


class _FakeWorker:
    def __init__(self, lane):
        self.lane = lane

    def open_lane(self, warm_up=False):
        assert warm_up  # the side lane's loader imports the meta device's modules first
        return self.lane


def _two_lanes(lane, stopped_on: dict, slow_main: float = 0.0):
    """Grades ONE on the main lane and TWO beside it; ``stopped_on``: (stage number, lane
    name) -> whether that grading ends with a stopped check. Returns the results and each
    grading as (stage number, lane name, warm_up)."""
    import time

    graded = []

    def grade(stage, on, warm_up=True):
        where = "main" if on is None else "side"
        graded.append((stage.number, where, warm_up))
        if where == "main" and stage is ONE:
            time.sleep(slow_main)  # the main lane is still busy while the side lane's stage ends
        stopped = stopped_on.get((stage.number, where), False)
        return _result(stage, *[S if stopped else P] * len(CHAPTER.checks_for(stage)))

    results = []
    engine._grade_on_two_lanes(_FakeWorker(lane), [ONE], [TWO], grade, results)
    return results, graded


def test_two_lanes_grade_one_stage_each_without_the_warm_up_then_close_the_side_lane():
    lane = _FakeLane()
    results, graded = _two_lanes(lane, {})
    assert sorted(graded) == [(1, "main", False), (2, "side", False)]
    assert [r.stage for r in results] == [ONE, TWO] and all(c.status is P for r in results for c in r.checks)
    assert lane.closed


def test_a_stage_stopped_while_the_other_lane_was_busy_is_graded_again_alone():
    results, graded = _two_lanes(_FakeLane(), {(2, "side"): True}, slow_main=0.3)
    assert graded[-1] == (2, "main", True)  # alone, on the main lane, after both lanes ended
    assert all(c.status is P for c in results[1].checks)  # the result of the grading alone counts


def test_a_stage_stopped_after_the_other_lane_ended_keeps_its_result():
    """An endless loop stops at the stage's time limit, long after the other lane's few
    seconds: grading it again alone would double the time and change nothing."""
    results, graded = _two_lanes(_FakeLane(), {(1, "main"): True, (2, "side"): False}, slow_main=0.3)
    assert (1, "main", True) not in graded
    assert all(c.status is S for c in results[0].checks)


def test_without_a_second_lane_every_stage_is_graded_on_the_main_lane_in_order():
    results, graded = _two_lanes(None, {})
    assert graded == [(1, "main", True), (2, "main", True)]
    assert [r.stage for r in results] == [ONE, TWO]


def test_a_side_lane_that_breaks_leaves_its_stages_to_the_main_lane():
    lane = _FakeLane()
    graded = []

    def grade(stage, on, warm_up=True):
        graded.append((stage.number, "main" if on is None else "side"))
        if on is not None:
            raise OSError("the lane's pipe broke")
        return _result(stage, *[P] * len(CHAPTER.checks_for(stage)))

    results = []
    engine._grade_on_two_lanes(_FakeWorker(lane), [ONE], [TWO], grade, results)
    assert graded[-1] == (2, "main") and [r.stage for r in results] == [ONE, TWO] and lane.closed


def test_the_second_lane_takes_the_main_lanes_last_stages_once_its_own_are_done():
    import time

    three, four = Stage(3, "three", "Stage three", ("h",)), Stage(4, "four", "Stage four", ("k",))
    graded = []

    def grade(stage, on, warm_up=True):
        where = "main" if on is None else "side"
        graded.append((stage.number, where))
        if where == "main" and stage is ONE:
            time.sleep(0.3)  # the main lane's first stage is long
        stopped = stage is four and where == "side"  # stopped while the main lane was still busy
        return StageResult(stage, [CheckResult(CHAPTER.checks_for(ONE)[0], S if stopped else P)], 1.0)

    results = []
    engine._grade_on_two_lanes(_FakeWorker(_FakeLane()), [ONE, three, four], [TWO], grade, results)
    # the side lane grades its own stage, then the main lane's last ones (four, then three) while
    # the main lane grades ONE; four, stopped there while the main lane was busy, is graded again alone
    assert sorted(graded[:4]) == [(1, "main"), (2, "side"), (3, "side"), (4, "side")]
    assert graded.index((4, "side")) < graded.index((3, "side"))
    assert graded[4:] == [(4, "main")]
    assert [r.stage for r in results] == [ONE, three, four, TWO]
    assert all(c.status is P for r in results for c in r.checks)
