"""``QuietOverwriteCells``: nbgrader's ``OverwriteCells`` without its false alarm on untouched test cells."""

from __future__ import annotations

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


def released_source(source: str) -> str:
    """A source cell's text as the release has it: nbgrader's ClearHiddenTests applied."""
    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class QuietOverwriteCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` (a changed locked cell is put back from the gradebook),
    without its "Attribute 'checksum' ... has changed!" warning for a test cell the student
    never touched: the gradebook's checksum covers the hidden tests, which the release (and so
    every untouched submission) lacks. An edited locked cell is still reported."""

    def preprocess_cell(self, cell, resources, cell_index):
        self._submitted_source = cell.source
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name, attr, old, new):
        if attr == "checksum":
            try:
                source = self.gradebook.find_source_cell(name, self.notebook_id, self.assignment_id).source
            except MissingEntry:
                source = None
            if source is not None and released_source(source).strip() == self._submitted_source.strip():
                return
        super().report_change(name, attr, old, new)
