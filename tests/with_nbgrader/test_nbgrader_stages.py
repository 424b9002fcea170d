"""The nbgrader plugins' pure helpers: stages by grade id, CSV columns, hidden seeds, the
precomputed runs of make autograde, and the feedback's MathML."""

from __future__ import annotations

from pathlib import Path

import pytest

# the instructors' install has nbgrader; make check-torch's venv (grading only) does not
pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
import nbformat  # noqa: E402

from autograder.chapters import load  # noqa: E402
from autograder.frontends.instructors.nbgrader import execute  # noqa: E402
from autograder.frontends.instructors.nbgrader.plugins import extra_credit_cell, math_as_mathml  # noqa: E402
from autograder.frontends.instructors.nbgrader.stages import by_grade_id, cells_key, chapter_of, csv_column, hidden_seeds, stage_cells  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CHAPTER = load("ch03_attention")


def test_chapter_of_an_assignment():
    assert chapter_of("ch03_attention").id == "ch03_attention"
    assert chapter_of("no_such_assignment") is None and chapter_of(None) is None


def test_csv_column_names_stage_number_and_id():
    stage = CHAPTER.stages[0]
    assert csv_column(stage) == f"stage{stage.number}_{stage.id}"
    assert csv_column(stage).startswith("stage1_")


def test_stage_cells_find_every_stage_test_cell_of_the_solution():
    nb = nbformat.read(CHAPTER.source_notebook(REPO), as_version=4)
    cells = stage_cells(nb, CHAPTER)
    assert sorted(s.number for s in cells.values()) == [s.number for s in CHAPTER.stages]
    for index, stage in cells.items():
        assert nb.cells[index].cell_type == "code"
        assert nb.cells[index].metadata["nbgrader"]["grade_id"] == stage.grade_id
    assert set(by_grade_id(CHAPTER)) == {s.grade_id for s in CHAPTER.stages}
    assert by_grade_id(None) == {}


def test_the_solution_hides_a_seed_in_each_graded_test_cell():
    nb = nbformat.read(CHAPTER.source_notebook(REPO), as_version=4)
    seeds = {stage.number: hidden_seeds(nb.cells[i].source, stage) for i, stage in stage_cells(nb, CHAPTER).items()}
    assert any(seeds.values())
    assert all(isinstance(s, int) for found in seeds.values() for s in found)


def test_hidden_seeds_read_only_the_stage_own_call():
    stage = CHAPTER.stages[1]
    source = (f'grade_stage("ch03_attention", {stage.number}, globals())\n'
              f'grade_stage("ch03_attention", {stage.number}, globals(), hidden_seed=1234)\n'
              f'grade_stage("ch03_attention", {stage.number + 1}, globals(), hidden_seed=99)\n')
    assert hidden_seeds(source, stage) == [1234]
    assert hidden_seeds("this is not python (", stage) == []


def test_cells_key_changes_with_a_cell_source():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    before = cells_key(nb)
    nb.cells[0].source = "x = 2"
    assert cells_key(nb) != before


def test_extra_credit_goes_on_the_last_graded_stage():
    graded = [s for s in CHAPTER.stages if not s.bonus]
    assert extra_credit_cell(CHAPTER) == graded[-1].grade_id
    assert extra_credit_cell(None) is None


def test_precomputed_runs_are_taken_once_and_only_for_their_cells():
    try:
        execute.PRECOMPUTED.update({"s1": ("key-a", {"stages": {}}), "s2": ("key-b", {"stages": {"1": {}}})})
        assert execute.take_precomputed("s1", "other cells") is None  # computed from other cells: run again
        assert execute.take_precomputed("s1", "key-a") is None  # the offer was used up
        assert execute.take_precomputed("s2", "key-b") == {"stages": {"1": {}}}
        assert execute.REUSED == ["s2"]
    finally:
        execute.PRECOMPUTED.clear()
        execute.REUSED.clear()
    assert execute.take_precomputed("s2", "key-b") is None


def test_math_becomes_mathml_outside_code():
    out = math_as_mathml("softmax $e^x$ and `$not math$`")
    assert "<math" in out and "$e^x$" not in out
    assert "`$not math$`" in out


@pytest.mark.parametrize("preprocessor", ["FeedbackClearHiddenTests", "ReadableFeedback", "ClearHiddenTests"])
def test_feedback_steps_take_the_html_exporters_settings_without_a_warning(preprocessor, caplog):
    """Issue 35: make feedback printed "Config option `display_data_priority` not recognized"
    twice per run. nbgrader's own ClearHiddenTests still warns: the test can see the warning."""
    import logging

    from nbconvert import HTMLExporter
    from nbgrader import preprocessors

    from autograder.frontends.instructors.nbgrader import plugins

    step = getattr(plugins, preprocessor, None) or getattr(preprocessors, preprocessor)
    exporter = HTMLExporter()
    with caplog.at_level(logging.WARNING):
        exporter.register_preprocessor(step, enabled=True)
    warned = "not recognized" in caplog.text
    assert warned == (preprocessor == "ClearHiddenTests"), caplog.text
