"""make release's course step: the points table follows the source notebook's test cells."""

from __future__ import annotations

import pytest

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.course import Course, StagePoints
from autograder.frontends.instructors.course import points_table

TABLE = """intro

| stage | id | you write | points |
|---|---|---|---|
| 1 | `softmax` | `softmax_naive(x)` | 10 |
| 7 | `gpt2` | `build_gpt2_small_mha()` | 10 |
| 8 | `efficiency` | `softmax_stable` | 10 bonus |

after"""


def test_points_change_drop_and_add_rows_keeping_the_rest_of_the_text():
    course = Course({1: StagePoints(5.0, False), 2: StagePoints(15.0, False), 7: StagePoints(12.5, False)}, "s")
    lines = points_table(TABLE, CHAPTER, course).split("\n")
    assert "| 1 | `softmax` | `softmax_naive(x)` | 5 |" in lines
    assert "| 7 | `gpt2` | `build_gpt2_small_mha()` | 12.5 |" in lines
    assert not any(line.startswith("| 8 ") for line in lines)  # the bonus dropped
    added = next(line for line in lines if line.startswith("| 2 "))  # a stage the table lacked
    assert added.endswith("| 15 |") and "`compute_attn_scores`" in added
    assert lines[0] == "intro" and lines[-1] == "after"


def test_a_text_without_a_table_of_stages_is_left_alone():
    assert points_table("no table here\n| a | b |", CHAPTER, CHAPTER.course) == "no table here\n| a | b |"


def test_a_course_without_the_bonus_and_other_points_reaches_every_sentence_a_student_reads(tmp_path):
    """The first stage 5 points more and the bonus section deleted, then make release's course
    step: the notebook's sentences quote the new total and nothing of a bonus; a students'
    repository graded by Classroom 50 (GRADE_ON=none) or by its own workflow says nothing of
    GitHub Classroom, which closed, nor of a bonus, in the notebook or the README."""
    import dataclasses
    import json

    from support import SOLUTION

    from autograder.frontends.instructors.course import release
    from autograder.frontends.instructors.student_repo import HAND_IN, student_readme, with_hand_in

    bonus = next((s for s in CHAPTER.stages if s.bonus), None)
    if bonus is None:
        pytest.skip("the course has no bonus stage: its source notebook has no bonus section to delete")
    first = CHAPTER.stages[0]
    points = CHAPTER.points(first) + 5  # other points whatever the course gives the stage
    notebook = json.loads(SOLUTION.read_text())
    cells = notebook["cells"]
    start = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(f"## {bonus.label}"))
    end = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("grade_id") == bonus.grade_id)
    del cells[start:end + 1]
    next(c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == first.grade_id)["metadata"]["nbgrader"]["points"] = points
    source = tmp_path / "solutions" / CHAPTER.id / f"{CHAPTER.id}.ipynb"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(notebook))
    chapter = dataclasses.replace(CHAPTER, course_path=tmp_path / "course.json", course_override=None)
    release(chapter, tmp_path)

    course = dataclasses.replace(chapter)  # a fresh read of the course file release wrote
    total = f"{course.max_score:g}"
    assert total == f"{CHAPTER.max_score + 5:g}"
    text = "\n".join("".join(c["source"]) for c in json.loads(source.read_text())["cells"])
    assert f"out of {total}" in text and f"out of {CHAPTER.max_score:g}" not in text
    for grade_on in HAND_IN:
        student = with_hand_in(source.read_bytes(), f"assignments/{CHAPTER.id}/{CHAPTER.id}.ipynb", grade_on).decode()
        readme = student_readme(course, "2.13.0", grade_on=grade_on)
        for words in ("GitHub Classroom", "bonus", "Bonus"):
            assert words not in student and words not in readme, (grade_on, words)
    assert "Classroom 50" in with_hand_in(source.read_bytes(), "nb.ipynb", "none").decode()


def test_a_stage_of_five_points_scores_the_same_whole_points_on_every_route():
    """Stage 1 at 5 points: its checks share them by weight, in fractions. With its first check
    failed, every route (make test's total, results.json for CI, Gradescope and the regrade,
    Classroom 50's result.json, the nbgrader test cell's value) reports the same whole points:
    the earned points rounded down."""
    import dataclasses
    import math

    from autograder.core.checks import CheckStatus
    from autograder.core.results import CheckResult, GradeReport, StageResult
    from autograder.frontends.hosted.classroom50 import classroom_result, identity
    from autograder.frontends.reports.results_json import gradescope_json
    from autograder.frontends.reports.text import total_line
    from autograder.frontends.students import notebook

    first = CHAPTER.stages[0]
    chapter = dataclasses.replace(CHAPTER, course_override=Course({**CHAPTER.course.stages, first.number: StagePoints(5.0, False)}, "s"))
    checks = chapter.checks_for(chapter.stage(first.number))
    earned = sum(c.points for c in checks[1:])
    assert earned != int(earned), "the weights give this stage fractional points"
    result = StageResult(chapter.stage(first.number), [CheckResult(checks[0], CheckStatus.FAILED, "wrong", "hint"),
                                                       *(CheckResult(c, CheckStatus.PASSED) for c in checks[1:])])
    report = GradeReport(chapter, submission="nb.ipynb")
    report.stages = [result]
    whole = math.floor(earned)
    assert result.score == whole
    assert gradescope_json(report)["score"] == whole
    assert classroom_result(report, identity(chapter.id, {}))["score"] == whole
    assert total_line(report).startswith(f"Total: {whole}/5")
    assert float(notebook.cell_value(result.score)) == whole
    # Gradescope's rows add up to the grade, the rounding a row of its own; on hidden examples too
    rows = gradescope_json(report)["tests"]
    assert sum(t["score"] for t in rows) == whole and sum(t["max_score"] for t in rows) == 5
    assert all({"name", "number", "score", "max_score", "status", "output"} <= set(t) for t in rows)  # the contract's fields
    all_passed = StageResult(result.stage, [CheckResult(c, CheckStatus.PASSED) for c in checks])
    report.stages, report.hidden_examples = [all_passed], {first.number: result}
    data = gradescope_json(report)
    assert data["score"] == whole and data["extra_data"]["hidden_examples"]["points_lost"] == 5 - whole
    assert sum(t["score"] for t in data["tests"]) == whole
    import json
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "schemas" / "gradescope_results.schema.json").read_text())
    jsonschema.validate(data, schema)
    hidden = [t for t in data["tests"] if "hidden examples" in t.get("tags", [])]
    assert {t["visibility"] for t in hidden} == {"after_due_date"} and sum(t["score"] for t in hidden) == whole - 5
