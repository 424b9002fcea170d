"""Adding a graded stage is its module, one line in the chapter, its cells in the source notebook
and its catalog files (docs/maintainers.md, "Adding a stage"). A stage 9 planted that way in a
copy of ch03 is graded end to end by the engine, out of the points its test cell states."""

from __future__ import annotations

import importlib
import json
import shutil
import sys

import pytest
from support import REPO, TESTS

from autograder.core.engine import grade_notebook_file
from autograder.frontends.instructors.course import release

CHAPTER_FOLDER = REPO / "autograder" / "chapters" / "ch03_attention"
PACKAGE = "planted_ch03"

# 1. the stage's module: its book value, its hint table, its checks and its STAGE
STAGE_MODULE = '''"""Stage 9 (scaled): scale_scores(scores) = scores / sqrt(d_k), d_k the scores' last axis."""

import torch

from autograder.chapters.ch03_attention import book
from autograder.chapters.ch03_attention.checks.spec import require
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import BOOK, expect_close
from autograder.core.strategies import EXAMPLES, float_arrays, run_property

# the scores of "Your" (the book's first row of attention scores), scaled
SCALED = torch.tensor([0.4080, 0.3896, 0.3847, 0.1940, 0.1868, 0.2576])
HINT = "divide by the square root of d_k, the scores' last axis"
ERROR_HINTS = [(r"unsupported operand", "scores is a tensor: divide it by a number, d_k ** 0.5")]


@check("9.1", 1, "book example: the first row of scores, scaled")
def book_example(sub):
    scale_scores = require(sub, "scale_scores", "function")
    first = book.INPUTS[0] @ book.INPUTS.T
    expect_close(scale_scores(first), SCALED, "scale_scores(scores)", tol=BOOK, hint=HINT)


@check("9.2", 3, "scales any scores by 1/sqrt(d_k)")
def any_scores(sub):
    scale_scores = require(sub, "scale_scores", "function")

    def body(array):
        x = torch.from_numpy(array.copy())
        expect_close(scale_scores(x), x.double() / x.shape[-1] ** 0.5, f"scale_scores(x) for x of shape "
                     f"{list(x.shape)}", hint=HINT)

    run_property(body, float_arrays(), examples=EXAMPLES["function"])


STAGE = StageParts(Stage(9, "scaled", "Scaled scores", ("scale_scores",)), error_hints=ERROR_HINTS)
'''

SOLUTION = "def scale_scores(scores):\n    return scores / scores.shape[-1] ** 0.5\n"
MISTAKE = '"""The scores divided by d_k, not by its square root."""\n\nSTAGE = 9\nHINT = "square root"\n\n\n' \
          "def scale_scores(scores):\n    return scores / scores.shape[-1]\n"


def notebook_cells() -> list[dict]:
    """3. the stage's cells in the source notebook: its heading, its solution, its test cell with points."""
    def cell(kind: str, source: str, nbgrader: dict | None = None) -> dict:
        found = {"cell_type": kind, "metadata": {"nbgrader": nbgrader} if nbgrader else {}, "source": source}
        return found | ({"execution_count": None, "outputs": []} if kind == "code" else {})

    meta = {"locked": False, "schema_version": 3, "task": False}
    return [cell("markdown", "## Stage 9 (scaled): scaled scores"),
            cell("code", f"### BEGIN SOLUTION\n{SOLUTION}### END SOLUTION",
                 {**meta, "grade": False, "grade_id": "scale_scores", "solution": True}),
            cell("code", 'from autograder import grade_stage\ngrade_stage("ch03_attention", 9, globals())',
                 {**meta, "grade": True, "grade_id": "test_stage9_scaled", "locked": True, "points": 5,
                  "solution": False})]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A copy of ch03 with stage 9 added the documented way, its course file written by make release."""
    root = tmp_path_factory.mktemp("course")
    package = root / PACKAGE
    shutil.copytree(CHAPTER_FOLDER, package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "checks" / "s9_scaled.py").write_text(STAGE_MODULE)
    chapter_file = package / "__init__.py"
    before = chapter_file.read_text()
    chapter_file.write_text(before.replace('"s8_efficiency")', '"s8_efficiency", "s9_scaled")'))
    changed = [line for line in chapter_file.read_text().splitlines() if line not in before.splitlines()]
    assert len(changed) == 1, changed  # 2. one line in the chapter
    source = root / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
    source.parent.mkdir(parents=True)
    notebook = json.loads((REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb").read_text())
    notebook["cells"] += notebook_cells()
    source.write_text(json.dumps(notebook, indent=1))
    sys.path.insert(0, str(root))
    try:
        chapter = importlib.import_module(PACKAGE).CHAPTER
        assert "course.json" in release(chapter, root)[1]
        mistakes = root / "catalog" / "mistakes"  # 4. its catalog files
        mistakes.mkdir(parents=True)
        (mistakes / "s9_divided_by_d_k.py").write_text(MISTAKE)
        yield chapter, root
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_planted_stage_is_graded_out_of_its_test_cells_points(planted):
    chapter, _ = planted
    stage = chapter.stage("scaled")
    assert [s.number for s in chapter.stages] == [*range(1, 10)] and not stage.bonus
    assert chapter.points(stage) == 5 and chapter.max_score == 105
    assert [(c.id, c.points) for c in chapter.checks_for(stage)] == [("9.1", 1.25), ("9.2", 3.75)]
    assert chapter.error_hints["scaled"][0][1].startswith("scores is a tensor")


def _grade(chapter, root, name: str, source: str):
    path = root / name
    path.write_text((TESTS / "catalog" / "correct" / "book_style.py").read_text() + "\n\n" + source)
    [result] = grade_notebook_file(str(path), chapter, [9], "cpu").stages
    return result


def test_the_engine_grades_the_planted_stage_end_to_end(planted):
    chapter, root = planted
    right = _grade(chapter, root, "right.py", SOLUTION)
    assert (right.score, right.max_score) == (5, 5), right.summary
    mistake = (root / "catalog" / "mistakes" / "s9_divided_by_d_k.py").read_text()
    wrong = _grade(chapter, root, "wrong.py", mistake)
    assert wrong.score < 5 and "square root" in wrong.hint, (wrong.summary, wrong.hint)
