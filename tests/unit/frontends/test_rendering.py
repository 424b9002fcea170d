"""autograder.frontends.rendering: atomic writes, the total line, Gradescope's results.json."""

from __future__ import annotations

import json

import pytest
from support import REPO

from autograder.chapters import load
from autograder.core.checks import CheckStatus
from autograder.core.results import CheckResult, GradeReport, StageResult
from autograder.frontends import rendering
from autograder.frontends.rendering import gradescope_json

CHAPTER = load("ch03_attention")
STAGES, checks_for = CHAPTER.stages, CHAPTER.checks_for


def test_a_failed_atomic_write_leaves_no_temporary_file(tmp_path):
    with pytest.raises(TypeError):
        rendering.write_json(tmp_path / "results.json", {"not json": object()})
    assert list(tmp_path.iterdir()) == []


def test_bonus_only_grading_has_no_total_out_of_zero():
    from autograder.core.engine import not_graded_report
    from autograder.core.results import GradeReport

    bonus = not_graded_report(CHAPTER, "x.ipynb", "reason", ["8"])
    assert rendering.total_line(GradeReport(CHAPTER, "x.ipynb", stages=bonus.stages)).startswith("Bonus: 0/")
    both = not_graded_report(CHAPTER, "x.ipynb", "reason", ["1", "8"])
    assert rendering.total_line(both).startswith("Total: 0/10 (+0/")


def _report(stage8_passed: bool) -> GradeReport:
    results = [StageResult(s, [CheckResult(c, CheckStatus.PASSED if (not s.bonus or stage8_passed) else CheckStatus.FAILED, "m", "h")
                               for c in checks_for(s)]) for s in STAGES]
    return GradeReport(CHAPTER, submission="x.ipynb", stages=results)


def test_gradescope_score_is_out_of_100_and_the_bonus_is_reported_apart():
    jsonschema = pytest.importorskip("jsonschema")
    data = gradescope_json(_report(stage8_passed=True))
    schema = json.loads((REPO / "tests" / "schemas" / "gradescope_results.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["score"] == 100
    assert {k: data["extra_data"][k] for k in ("bonus_score", "bonus_max_score")} == {"bonus_score": 10, "bonus_max_score": 10}
    bonus_tests = [t for t in data["tests"] if t["number"].startswith("8.")]
    assert bonus_tests and all("(bonus)" in t["name"] and t["tags"] == ["bonus"] for t in bonus_tests)
    graded = [t for t in data["tests"] if "bonus" not in t.get("tags", [])]
    assert sum(t["score"] for t in graded) == 100 == sum(t["max_score"] for t in graded)
    assert "Total: 100/100 (+10/10 bonus)" in data["output"]
