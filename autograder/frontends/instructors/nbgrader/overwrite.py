"""``QuietOverwriteCells``: nbgrader's ``OverwriteCells`` without its false alarm on untouched test cells."""

from __future__ import annotations

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


def released_source(source: str) -> str:
    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class QuietOverwriteCells(OverwriteCells):
    """No "checksum has changed" warning for an untouched test cell: the gradebook's checksum
    covers the hidden tests, which the release lacks. An edited locked cell is still reported."""

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
