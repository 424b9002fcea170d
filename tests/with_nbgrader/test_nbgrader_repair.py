"""autograder/frontends/instructors/nbgrader/plugins.py: a copied graded cell, and metadata naming no cell of
the assignment, repaired before nbgrader reads them (nbgrader itself: tests/e2e/test_instructor_class.py)."""

from __future__ import annotations

import copy
import json

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
import nbformat  # noqa: E402
from support import SOLUTION  # noqa: E402

from autograder.frontends.instructors.nbgrader.plugins import repair_cells  # noqa: E402

PASTED = "stage1_softmax_solution"


def _solution():
    nb = nbformat.read(SOLUTION, as_version=4)
    known = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "grade_id" in c.metadata.get("nbgrader", {})}
    return nb, known


def _grade_ids(nb) -> list:
    return [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]


def test_an_untouched_notebook_is_left_as_it_is():
    nb, known = _solution()
    before = copy.deepcopy(nb)
    assert repair_cells(nb, known) == []
    assert nb == before


def test_a_pasted_graded_cell_keeps_its_code_and_loses_its_metadata():
    nb, known = _solution()
    where = _grade_ids(nb).index(PASTED)
    nb.cells.insert(where + 1, copy.deepcopy(nb.cells[where]))  # Jupyter's copy: same metadata, same id
    with pytest.warns(nbformat.warnings.DuplicateCellId):  # read as nbgrader reads it: the ids made unique
        nb = nbformat.reads(json.dumps(nb), as_version=4)
    notes = repair_cells(nb, known)
    assert notes == [f"cell {where + 2} is a copy of cell {where + 1} ('{PASTED}'): run as plain code"]
    assert _grade_ids(nb).count(PASTED) == 1 and _grade_ids(nb).index(PASTED) == where
    assert "nbgrader" not in nb.cells[where + 1].metadata
    assert nb.cells[where + 1].source == nb.cells[where].source  # the student's code still runs
    ids = [c.get("id") for c in nb.cells]
    assert len(ids) == len(set(ids))  # nbformat's cell ids made unique again
    nbformat.validate(nb)


def test_metadata_naming_no_cell_of_the_assignment_is_removed():
    nb, known = _solution()
    where = _grade_ids(nb).index(PASTED)
    nb.cells[where].metadata["nbgrader"]["grade_id"] = "my_own_id"
    nb.cells[0].metadata["nbgrader"] = {}  # what nbgrader's DeduplicateIds leaves
    notes = repair_cells(nb, known)
    assert notes == [f"cell {where + 1} names no cell of the assignment ('my_own_id'): run as plain code"]
    assert "nbgrader" not in nb.cells[where].metadata and "nbgrader" not in nb.cells[0].metadata
