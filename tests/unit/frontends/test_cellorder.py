"""autograder.frontends.cellorder: a name used in one cell and defined only in a later one."""

from __future__ import annotations

from autograder.frontends import cellorder
from autograder.sandbox.loader import Cell

LATE_CELLS = [
    Cell(1, "import torch\n"),
    Cell(2, "def softmax_naive(x):\n    e = torch.exp(x * SCALE)\n    return e / e.sum(-1, keepdim=True)\n"),
    Cell(3, 'from autograder import grade_stage\ngrade_stage("ch03_attention", 1, globals())\n'),
    Cell(4, "SCALE = 1.0\n"),
]


def test_a_name_defined_only_below_its_use_is_named_with_its_cells():
    (late,) = cellorder.late_names(LATE_CELLS)
    assert (late.cell, late.user, late.name, late.defined_in, late.test_cell) == (2, "softmax_naive", "SCALE", 4, 3)
    assert "cell 2" in str(late) and "cell 4" in str(late) and "test cell 3" in str(late)
    defined_first = [LATE_CELLS[0], Cell(2, "SCALE = 1.0\n"), LATE_CELLS[1]]
    assert cellorder.late_names(defined_first) == []
