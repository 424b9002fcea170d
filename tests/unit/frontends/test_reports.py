"""reports/: the points formatter, results.json from a hand-built report, safe writes."""

from __future__ import annotations

import json

import pytest
from support import REPO, every_declared_stage

from autograder.chapters import load
from autograder.core.checks import CheckStatus
from autograder.core.failures import Hint
from autograder.core.results import CheckResult, GradeReport, StageResult
from autograder.frontends.reports import safe_write
from autograder.frontends.reports.results_json import gradescope_json
from autograder.frontends.reports.safe_write import is_results_json, overwrite_refusal, write_results
from autograder.frontends.reports.text import format_points, split_example, total_line

CHAPTER = every_declared_stage(load("ch03_attention"))  # a bonus stage whatever the course
STAGES, checks_for = CHAPTER.stages, CHAPTER.checks_for


@pytest.mark.parametrize(("value", "text"), [(10.0, "10"), (2.5, "2.5"), (0, "0"), (100, "100"), (0.25, "0.25")])
def test_format_points(value, text):
    assert format_points(value) == text


def _report(passing: int) -> GradeReport:
    """Stage 1 with its first ``passing`` checks passed and the rest failed."""
    stage = CHAPTER.stages[0]
    checks = [CheckResult(c, CheckStatus.PASSED if i < passing else CheckStatus.FAILED,
                          "" if i < passing else "wrong values", "" if i < passing else "sum over the last axis")
              for i, c in enumerate(CHAPTER.checks_for(stage))]
    return GradeReport(CHAPTER, "x.ipynb", stages=[StageResult(stage, checks)])


def test_gradescope_json_scores_and_numbers_the_tests():
    report = _report(1)
    checks = CHAPTER.checks_for(CHAPTER.stages[0])
    data = gradescope_json(report)
    assert data["score"] == checks[0].points
    assert [t["number"] for t in data["tests"]] == [c.id for c in checks]
    assert all(t["number"].startswith("1.") for t in data["tests"])
    assert data["tests"][0]["status"] == "passed" and data["tests"][0]["score"] == checks[0].points
    assert data["tests"][1]["status"] == "failed" and data["tests"][1]["score"] == 0
    assert data["tests"][1]["output"] == "wrong values\nhint: sum over the last axis"
    assert sum(t["score"] for t in data["tests"]) == data["score"]
    assert "confinement" in data["extra_data"]


def test_a_report_that_could_not_grade_says_why_first():
    report = _report(0)
    report.error = "damaged notebook"
    assert gradescope_json(report)["output"].splitlines()[0] == "Could not grade: damaged notebook"


def test_total_line_and_split_example():
    report = _report(len(CHAPTER.checks_for(CHAPTER.stages[0])))
    assert total_line(report) == f"Total: {format_points(report.score)}/{format_points(report.max_score)}"
    assert split_example("off (smallest failing case: shape (1, 2))") == ("off", "shape (1, 2)")
    assert split_example("off") == ("off", "")


def test_overwrite_refusal(tmp_path):
    ours = is_results_json
    assert overwrite_refusal(tmp_path / "new.json", "--results", ours) is None
    (tmp_path / "old.json").write_text(json.dumps({"tests": []}))
    assert overwrite_refusal(tmp_path / "old.json", "--results", ours) is None
    (tmp_path / "notes.txt").write_text("my notes")
    assert "not written by this grader" in overwrite_refusal(tmp_path / "notes.txt", "--results", ours)
    assert "folder" in overwrite_refusal(tmp_path, "--results", ours)
    (tmp_path / "link.json").symlink_to(tmp_path / "old.json")
    assert "link" in overwrite_refusal(tmp_path / "link.json", "--results", ours)


def test_write_results_leaves_a_foreign_file_alone(tmp_path):
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    assert not write_results(notes, {"tests": []})
    assert notes.read_text() == '{"mine": 1}'
    assert write_results(tmp_path / "results.json", {"tests": [], "score": 3})
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 3


def test_a_failed_atomic_write_leaves_no_temporary_file(tmp_path):
    with pytest.raises(TypeError):
        safe_write.write_json(tmp_path / "results.json", {"not json": object()})
    assert list(tmp_path.iterdir()) == []


def test_bonus_only_grading_has_no_total_out_of_zero():
    if not any(s.bonus for s in CHAPTER.stages):
        pytest.skip("the course has no bonus stage")
    from autograder.core.engine import not_graded_report
    from autograder.core.results import GradeReport

    bonus = not_graded_report(CHAPTER, "x.ipynb", "reason", ["8"])
    assert total_line(GradeReport(CHAPTER, "x.ipynb", stages=bonus.stages)).startswith("Bonus: 0/")
    both = not_graded_report(CHAPTER, "x.ipynb", "reason", ["1", "8"])
    assert total_line(both).startswith("Total: 0/10 (+0/")


def _whole_report(stage8_passed: bool) -> GradeReport:
    results = [StageResult(s, [CheckResult(c, CheckStatus.PASSED if (not s.bonus or stage8_passed) else CheckStatus.FAILED, "m", "h")
                               for c in checks_for(s)]) for s in STAGES]
    return GradeReport(CHAPTER, submission="x.ipynb", stages=results)


def test_gradescope_score_is_out_of_100_and_the_bonus_is_reported_apart():
    if not any(s.bonus for s in CHAPTER.stages):
        pytest.skip("the course has no bonus stage")
    jsonschema = pytest.importorskip("jsonschema")
    data = gradescope_json(_whole_report(stage8_passed=True))
    schema = json.loads((REPO / "tests" / "schemas" / "gradescope_results.schema.json").read_text())
    jsonschema.validate(data, schema)
    bonus = sum(CHAPTER.points(s) for s in STAGES if s.bonus)
    assert data["score"] == CHAPTER.max_score
    assert {k: data["extra_data"][k] for k in ("bonus_score", "bonus_max_score")} == {"bonus_score": bonus, "bonus_max_score": bonus}
    bonus_tests = [t for t in data["tests"] if CHAPTER.stage(t["number"].split(".")[0]).bonus]
    assert bonus_tests and all("(bonus)" in t["name"] and t["tags"] == ["bonus"] for t in bonus_tests)
    graded = [t for t in data["tests"] if "bonus" not in t.get("tags", [])]
    assert sum(t["score"] for t in graded) == CHAPTER.max_score == sum(t["max_score"] for t in graded)
    most, extra = format_points(CHAPTER.max_score), format_points(bonus)
    assert f"Total: {most}/{most} (+{extra}/{extra} bonus)" in data["output"]


def test_the_table_shows_one_hint_a_row_and_with_verbose_every_failed_checks(capsys):
    """make test: the row's hint; make test V=1: each failed check with its own hint. The sandbox's
    fences are named with V=1 only."""
    from autograder.frontends.reports.console import print_console

    report = _report(1)
    report.stages[0].checks[2].diagnosis = Hint("keep the axis")
    print_console(report)
    plain = capsys.readouterr().out
    assert "sum over the last axis" in plain and "keep the axis" not in plain and "confinement" not in plain
    print_console(report, verbose=True)
    verbose = " ".join(capsys.readouterr().out.split())
    assert "1.2 sum over the last axis" in verbose and "1.3 keep the axis" in verbose and "confinement" in verbose
