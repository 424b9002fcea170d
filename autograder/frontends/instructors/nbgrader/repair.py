"""``RepairCells``: what Jupyter does to a notebook's cells, repaired before nbgrader reads them.

A student who copies a graded cell in Jupyter gets a second cell with the same nbgrader
metadata. nbgrader's ``DeduplicateIds`` then empties the metadata of every copy but the last,
and its ``OverwriteCells`` fails on the emptied cell (``KeyError: 'grade_id'``, the student not
graded at all); a ``grade_id`` that is not the assignment's (a renamed or invented one) fails
the same way. The metadata is the student's file, so it is trusted for nothing: only the first
cell that names each of the assignment's cells (from the gradebook) keeps its nbgrader
metadata; every other cell's is removed, and the cell runs as the plain code it is (a copied
answer still defines what it defines, in notebook order). nbgrader then restores the cells a
student deleted or edited from the gradebook (``OverwriteCells``), as it always did.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.frontends.instructors.nbgrader.outcome import start_outcome


def repair_cells(nb, known: set[str]) -> list[str]:
    """Removes the nbgrader metadata of every cell but the first naming each id of ``known``
    (the assignment's cells), and renumbers repeated cell ids (nbformat's own ``id``), in
    place. Returns one note per repair, with the cell's position (1-based)."""
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
    """The first of autograde's sanitize steps (nbgrader_config.py), in nbgrader's own process:
    :func:`repair_cells` against the assignment's cells in the gradebook, and the student's
    outcome marked as started (:mod:`.outcome`), with the repairs as its notes."""

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
