"""ch03's CHAPTER as data: points, check ids, titles, and the notebook's nbgrader points agree.

A stage's points are stated once, by its test cell's nbgrader points in the source notebook;
``make release`` copies them to the course file. Each test here compares what the grader reads
(the course file, the checks' shares) with that source and with what others show (the README).
"""

from __future__ import annotations

import json
import re
import sys
import types

import pytest
from support import REPO, TESTS

from autograder.chapters import REGISTRY, load
from autograder.chapters.ch03_attention import CHAPTER
from autograder.core import course as course_file
from autograder.core.chapter import Chapter, Stage, StageParts
from autograder.core.checks import check
from autograder.core.submission import LocalTransport, Submission

SOURCE_NOTEBOOK = CHAPTER.source_notebook(REPO)
STAGE_IDS = [s.number for s in CHAPTER.stages]


def test_the_course_file_is_the_source_notebooks():
    """The grader reads the course file; a source notebook edited since make release is stale."""
    source = course_file.from_notebook(SOURCE_NOTEBOOK, CHAPTER.declared_stages,
                                       SOURCE_NOTEBOOK.relative_to(REPO).as_posix())
    assert CHAPTER.course == source, "the source notebook's points changed: run make release"
    assert [s.number for s in CHAPTER.stages] == sorted(source.stages)


def test_the_max_score_is_the_graded_test_cells_points():
    assert CHAPTER.max_score == sum(meta["points"] for meta in nbgrader_cells().values() if meta.get("grade"))


def test_the_bonus_is_the_courses_only():
    """The source notebook states the bonus (an ungraded test cell); a stage module never does."""
    assert not any(s.bonus for s in CHAPTER.declared_stages)
    if not any(s.bonus for s in CHAPTER.stages):
        pytest.skip("the course has no bonus stage")
    assert [s.id for s in CHAPTER.stages if s.bonus] == ["efficiency"]


def test_stage_points_are_the_readmes():
    """README's "What each stage teaches" table: | 4 | `causal` | ... | 20 | (a bonus as +10)."""
    readme = (REPO / "README.md").read_text()
    table = {int(number): (stage_id, float(points)) for number, stage_id, points in
             re.findall(r"^\| (\d+) \| `(\w+)` \|.*\| ([\d.]+)(?: bonus)? \|$", readme, re.MULTILINE)}
    assert table == {s.number: (s.id, CHAPTER.points(s)) for s in CHAPTER.stages}


@pytest.mark.parametrize("stage", CHAPTER.stages, ids=[s.id for s in CHAPTER.stages])
def test_stage_points_are_split_over_its_checks_by_weight(stage):
    checks = CHAPTER.checks_for(stage)
    assert checks, f"{stage.label} has no checks"
    assert all(c.points > 0 for c in checks), [(c.id, c.points) for c in checks]
    assert sum(c.points for c in checks) == pytest.approx(CHAPTER.points(stage), abs=1e-9)
    weights = sum(c.run.check_spec.weight for c in checks)
    for c in checks:
        assert c.points == pytest.approx(CHAPTER.points(stage) * c.run.check_spec.weight / weights, abs=1e-5)


@pytest.mark.parametrize("stage", CHAPTER.stages, ids=[s.id for s in CHAPTER.stages])
def test_check_ids_number_each_stage_from_1(stage):
    ids = [c.id for c in CHAPTER.checks_for(stage)]
    assert ids == [f"{stage.number}.{k}" for k in range(1, len(ids) + 1)]
    assert all(c.stage is stage for c in CHAPTER.checks_for(stage))


def test_check_ids_are_unique_across_the_chapter():
    ids = [c.id for c in CHAPTER.checks]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert all(re.fullmatch(r"[1-9]\d*\.[1-9]\d*", i) for i in ids), ids


def test_every_check_declares_a_title():
    untitled = [c.id for c in CHAPTER.checks if not c.title.strip()]
    assert not untitled
    for stage in CHAPTER.stages:  # the same property may be checked in two stages (4.4 and 6.6), not twice in one
        titles = [c.title for c in CHAPTER.checks_for(stage)]
        assert len(set(titles)) == len(titles), f"two checks of {stage.label} share a title"


def test_every_check_is_the_function_that_declares_it():
    for c in CHAPTER.checks:
        assert (c.run.check_spec.id, c.run.check_spec.title) == (c.id, c.title)


# -- the nbgrader source notebook -------------------------------------------------------------

def nbgrader_cells() -> dict[str, dict]:
    cells = json.loads(SOURCE_NOTEBOOK.read_text())["cells"]
    return {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"] for c in cells
            if "grade_id" in c.get("metadata", {}).get("nbgrader", {})}


@pytest.mark.parametrize("stage", CHAPTER.graded_stages, ids=[s.id for s in CHAPTER.graded_stages])
def test_notebook_test_cell_points_are_the_stages(stage):
    cell = nbgrader_cells().get(stage.grade_id)
    assert cell is not None, f"{SOURCE_NOTEBOOK.name} has no cell {stage.grade_id}"
    assert cell["grade"] is True and cell["locked"] is True
    assert cell["points"] == CHAPTER.points(stage)


def test_notebook_grades_exactly_the_graded_stages():
    """A bonus stage's cell is locked but never graded (nbgrader would add its points to the
    maximum); its points are the bonus's."""
    graded = {grade_id for grade_id, meta in nbgrader_cells().items() if meta.get("grade")}
    assert graded == {s.grade_id for s in CHAPTER.graded_stages}
    for stage in (s for s in CHAPTER.stages if s.bonus):
        meta = nbgrader_cells()[stage.grade_id]
        assert meta["locked"] and not meta["grade"] and meta["points"] == CHAPTER.points(stage)


# -- the registry and the core's chapter API ---------------------------------------------------

def test_every_registered_chapter_loads_by_id():
    for chapter_id in REGISTRY:
        assert load(chapter_id).id == chapter_id


def test_a_chapter_also_loads_by_module_path():
    assert load("autograder.chapters.ch03_attention") is CHAPTER


def test_an_unknown_chapter_is_a_key_error_naming_the_registered_ones():
    with pytest.raises(KeyError, match="ch03_attention"):
        load("no_such_chapter")


def test_stages_are_found_by_number_text_or_id():
    assert CHAPTER.stage(4) is CHAPTER.stage("4") is CHAPTER.stage("causal")
    with pytest.raises(KeyError, match="stages are 1/softmax"):
        CHAPTER.stage(99)


def test_select_keeps_the_chapters_order():
    assert [s.number for s in CHAPTER.select(["mha", "2", 4])] == [2, 4, 6]
    assert [s.number for s in CHAPTER.select(None)] == STAGE_IDS


def test_check_ids_must_be_stage_dot_number():
    for bad in ("4", "4.", "a.1", "4.3.1", " 4.3"):
        with pytest.raises(ValueError):
            check(bad, 1, "title")


def _stage_module(name: str, stage: Stage, **checks) -> types.ModuleType:
    """A stage module in sys.modules: ``checks`` (marked functions) and a STAGE of ``stage``."""
    module = types.ModuleType(name)
    for attr, fn in checks.items():
        fn.__module__ = name
        setattr(module, attr, fn)
    module.STAGE = StageParts(stage)
    sys.modules[name] = module
    return module


ONE = Stage(1, "one", "One", ())


def test_collect_orders_checks_by_id_not_by_definition():
    second = check("1.10", 1, "tenth")(lambda sub: None)
    first = check("1.2", 2, "second")(lambda sub: None)
    chapter = Chapter("tiny", "Tiny", (_stage_module("tiny_order", ONE, second=second, first=first).__name__,))
    assert [c.id for c in chapter.checks_for(ONE)] == ["1.2", "1.10"]


def test_a_stage_declared_by_two_modules_is_refused():
    a = check("1.1", 1, "a")(lambda sub: None)
    b = check("1.2", 1, "b")(lambda sub: None)
    chapter = Chapter("tiny", "Tiny", (_stage_module("tiny_a", ONE, a=a).__name__,
                                       _stage_module("tiny_b", ONE, b=b).__name__))
    with pytest.raises(ValueError, match="declares Stage 1 .one., as tiny_a does"):
        assert chapter.declared_stages


def test_collect_refuses_a_check_numbered_for_another_stage_than_its_modules():
    stray = check("2.1", 1, "stray")(lambda sub: None)
    chapter = Chapter("tiny", "Tiny", (_stage_module("tiny_stray", ONE, stray=stray).__name__,))
    with pytest.raises(ValueError, match="2.1 is declared in tiny_stray, the module of stage 1"):
        assert chapter.checks


def test_a_stage_module_without_checks_is_refused():
    chapter = Chapter("tiny", "Tiny", (_stage_module("tiny_empty", ONE).__name__,))
    with pytest.raises(ValueError, match="tiny_empty declares no @check"):
        assert chapter.checks


def test_collect_ignores_checks_imported_from_another_module():
    own = check("1.1", 1, "own")(lambda sub: None)
    module = _stage_module("tiny_own", ONE, own=own)
    module.borrowed = check("1.2", 1, "borrowed")(lambda sub: None)  # __module__ is this test file's
    assert [c.id for c in Chapter("tiny", "Tiny", (module.__name__,)).checks_for(ONE)] == ["1.1"]


# -- a stage is one unit ----------------------------------------------------------------------

def test_every_exhibit_draws_each_of_its_checks_failures():
    """A check that drew no example shows the book's call of its module: each module's spec
    carries that call, so no check of a stage with an exhibit goes without its heatmap."""
    namespace: dict = {}
    source = TESTS / "catalog" / "correct" / "book_style.py"
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    sub = Submission(LocalTransport(namespace), "", ())
    drawn = []
    for stage in CHAPTER.stages:
        exhibit = CHAPTER.parts(stage).exhibit
        for c in CHAPTER.checks_for(stage) if exhibit else ():
            shown = exhibit(sub, c.id, None)
            assert shown is not None and shown.student is not None, c.id
            drawn.append(stage.number)
    assert sorted(set(drawn)) == [3, 4, 5, 6]


def test_a_stage_module_without_its_declaration_fails_loudly():
    module = types.ModuleType("tiny_undeclared")
    sys.modules[module.__name__] = module
    with pytest.raises(ValueError, match="tiny_undeclared declares no STAGE"):
        assert Chapter("tiny", "Tiny", (module.__name__,)).declared_stages


def test_the_engine_runs_the_policy_each_stage_declares():
    from autograder.core.engine import call_policy_in_force
    from autograder.sandbox.settings import Settings

    for stage in CHAPTER.declared_stages:
        declared = CHAPTER.parts(stage).call_policy
        assert call_policy_in_force(CHAPTER, stage, Settings()) == (declared is not None), stage.label
        assert not call_policy_in_force(CHAPTER, stage, Settings(allow_library_attention=True)), stage.label
