"""The course: the source notebook's test cells decide the stages, their points and the bonus."""

from __future__ import annotations

import json

import pytest
from support import chapter_of

from autograder.core import course as course_file
from autograder.core.chapter import Chapter, Stage
from autograder.core.checks import check
from autograder.core.course import Course, CourseError, StagePoints, points_in_cells, stale_points

ONE = Stage(1, "one", "One", ("f",))
TWO = Stage(2, "two", "Two", ("g",))
EXTRA = Stage(3, "extra", "Extra", ("h",))
STAGES = (ONE, TWO, EXTRA)

CHECKS = [check(check_id, weight, f"check {check_id}")(lambda sub: None)
          for check_id, weight in (("1.1", 1), ("1.2", 3), ("2.1", 1), ("2.2", 1), ("2.3", 1), ("3.1", 2))]


def cell(stage: Stage, points, grade: bool) -> dict:
    meta = {"grade": grade, "grade_id": stage.grade_id, "locked": True, "solution": False, "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return {"cell_type": "code", "metadata": {"nbgrader": meta}, "source": ""}


def notebook(*cells) -> dict:
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# title"}, *cells]}


def chapter(course: Course | None) -> Chapter:
    return chapter_of("toy_course", STAGES, *CHECKS, course_override=course)


def test_the_test_cells_points_are_the_course():
    found = points_in_cells(notebook(cell(ONE, 8, True), cell(TWO, 12, True), cell(EXTRA, 4, False)), STAGES)
    assert found == {1: StagePoints(8.0, False), 2: StagePoints(12.0, False), 3: StagePoints(4.0, True)}


def test_a_stage_without_a_test_cell_is_dropped():
    assert set(points_in_cells(notebook(cell(ONE, 8, True)), STAGES)) == {1}


@pytest.mark.parametrize("bad", [cell(ONE, None, True), cell(ONE, "ten", True), cell(ONE, -1, True),
                                 cell(ONE, 2.5, True)])
def test_a_test_cell_that_does_not_say_its_points_is_refused_with_its_name(bad):
    with pytest.raises(CourseError, match=bad["metadata"]["nbgrader"]["grade_id"]):
        points_in_cells(notebook(bad), STAGES)


def test_a_notebook_without_a_graded_stage_is_refused(tmp_path):
    path = tmp_path / "toy.ipynb"
    path.write_text(json.dumps(notebook(cell(EXTRA, 4, False))))
    with pytest.raises(CourseError, match="no graded stage"):
        course_file.from_notebook(path, STAGES, "toy.ipynb")


def test_the_course_file_round_trips_and_is_rewritten_only_when_it_changes(tmp_path):
    course = Course({1: StagePoints(5.0, False), 3: StagePoints(10.0, True)}, "solutions/toy.ipynb")
    path = tmp_path / "course.json"
    assert course_file.write(course, path) is True
    assert course_file.read(path) == course
    assert course_file.write(course, path) is False


def test_a_damaged_course_file_says_how_to_make_it(tmp_path):
    (tmp_path / "course.json").write_text("{")
    with pytest.raises(CourseError, match="make release"):
        course_file.read(tmp_path / "course.json")


def test_the_course_makes_a_stage_a_bonus():
    toy = chapter(Course({1: StagePoints(5.0, False), 3: StagePoints(4.0, True)}, "toy"))
    assert [(s.number, s.bonus) for s in toy.stages] == [(1, False), (3, True)]
    assert [c.stage.bonus for c in toy.checks_for(toy.stage(3))] == [True]
    assert toy.max_score == 5


def test_a_stage_is_worth_the_courses_points_split_by_the_checks_weights():
    toy = chapter(Course({1: StagePoints(5.0, False), 2: StagePoints(10.0, False)}, "toy"))
    assert [s.number for s in toy.stages] == [1, 2]  # the bonus stage has no test cell: dropped
    assert [c.points for c in toy.checks_for(toy.stage(1))] == [1.25, 3.75]
    assert [c.points for c in toy.checks_for(toy.stage(2))] == [3.333333, 3.333333, 3.333334]
    assert toy.max_score == 15
    with pytest.raises(KeyError, match="no stage 3"):
        toy.stage(3)


def test_without_a_course_each_stage_is_worth_its_checks_weights():
    toy = chapter(None)
    assert [toy.points(s) for s in toy.stages] == [4, 3, 2]


def test_a_course_naming_an_undeclared_stage_fails_loudly():
    with pytest.raises(CourseError, match=r"\[9\]"):
        assert chapter(Course({1: StagePoints(5.0, False), 9: StagePoints(1.0, False)}, "toy")).stages


def test_a_stale_notebook_is_named_beside_the_instructors_numbers():
    toy = chapter(Course({1: StagePoints(5.0, False), 2: StagePoints(10.0, False)}, "solutions/toy.ipynb"))
    stale = notebook(cell(ONE, 10, True), cell(TWO, 10, True), cell(EXTRA, 4, False))
    note = stale_points(stale, toy)
    assert note.count(".") <= 1 and "stage 1 10, stage 3 4 against stage 1 5, stage 3 none" in note
    assert "solutions/" not in note and "instructor's" in note  # a student has no solutions/
    assert stale_points(notebook(cell(ONE, 5, True), cell(TWO, 10, True)), toy) is None


def test_a_deleted_test_cell_is_named_with_what_to_do():
    toy = chapter(Course({1: StagePoints(5.0, False), 2: StagePoints(10.0, False)}, "solutions/toy.ipynb"))
    note = stale_points(notebook(cell(ONE, 5, True)), toy)
    assert "test cell of stage 2 is missing" in note and "restore the test cell" in note and "solutions/" not in note


def test_a_stale_note_survives_a_damaged_cell():
    toy = chapter(Course({1: StagePoints(5.0, False), 2: StagePoints(10.0, False)}, "toy"))
    assert "stage 1 10" in stale_points(notebook(cell(ONE, 10, True), cell(TWO, "x", True)), toy)
