"""``RepairCells``: a graded cell copied in Jupyter repaired before nbgrader reads it.

A copy carries the same nbgrader metadata, which nbgrader's ``DeduplicateIds`` empties and
``OverwriteCells`` then fails on (the student not graded at all); so does an invented
``grade_id``. Only the first cell naming each of the assignment's cells keeps its metadata;
the others run as plain code.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.frontends.instructors.nbgrader.outcome import start_outcome


def repair_cells(nb, known: set[str]) -> list[str]:
    """In place: nbgrader metadata kept on the first cell naming each id of ``known`` only, repeated
    cell ids renumbered. One note per repair."""
    notes, first, ids = [], {}, set()
    for position, cell in enumerate(nb.cells, start=1):
        cell_id = cell.get("id")
        if isinstance(cell_id, str):
            fresh, copy = cell_id, 1
            while fresh in ids:  # nbformat requires unique ids; a hand-edited notebook may repeat them
                copy += 1
                fresh = f"{cell_id}-{copy}"
            cell["id"] = fresh
            ids.add(fresh)
        metadata = cell.get("metadata", {})
        if "nbgrader" not in metadata:
            continue
        meta = metadata["nbgrader"]
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if grade_id in known and grade_id not in first:
            first[grade_id] = position
            continue
        del metadata["nbgrader"]
        if grade_id in first:
            notes.append(f"cell {position} is a copy of cell {first[grade_id]} ('{grade_id}'): run as plain code")
        elif isinstance(meta, dict) and any(meta.get(flag) for flag in ("grade", "solution", "locked", "task")):
            notes.append(f"cell {position} names no cell of the assignment ({grade_id!r}): run as plain code")
    return notes


class RepairCells(NbGraderPreprocessor):
    """The first sanitize step: the repair, and the outcome marked as started with its notes."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                known = {cell.name for cell in gb.find_notebook(info["notebook"], info["assignment"]).source_cells}
            except MissingEntry:
                known = set()
        notes = repair_cells(nb, known)
        for note in notes:
            self.log.warning("%s", note)
        start_outcome(str(info["student"]), str(info["assignment"]), notes)
        return nb, resources
