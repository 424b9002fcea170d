"""autograder.frontends.students.cellorder: a name used in one cell and defined only in a later one."""

from __future__ import annotations

from autograder.frontends.students import cellorder
from autograder.sandbox.loader import Cell, cell_label


def cell(index: int, source: str) -> Cell:
    return Cell(index, source, cell_label(source))  # named as read_cells names it


LATE_CELLS = [
    cell(1, "import torch\n"),
    cell(2, "def softmax_naive(x):\n    e = torch.exp(x * SCALE)\n    return e / e.sum(-1, keepdim=True)\n"),
    cell(3, 'from autograder import grade_stage\ngrade_stage("ch03_attention", 1, globals())\n'),
    cell(4, "SCALE = 1.0\n"),
]


def test_a_name_defined_only_below_its_use_is_named_with_its_cells():
    (late,) = cellorder.late_names(LATE_CELLS)
    # named by their first lines, as the student sees them; never by a position
    assert late.startswith('cell "def softmax_naive(x):": `softmax_naive` uses `SCALE`')
    assert 'in cell "SCALE = 1.0"' in late and "cell 2" not in late
    assert 'test cell "from autograder import grade_stage" runs before that' in late
    defined_first = [LATE_CELLS[0], cell(2, "SCALE = 1.0\n"), LATE_CELLS[1]]
    assert cellorder.late_names(defined_first) == []
