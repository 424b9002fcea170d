"""The course's changes to nbgrader's autograde and feedback, each switched on in nbgrader_config.py."""

from __future__ import annotations

import math
import re

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties, ClearHiddenTests, NbGraderPreprocessor
from traitlets import Float, List

from autograder.core.chapter import Chapter
from autograder.frontends.instructors.nbgrader.stages import UNFINISHED, chapter_of, stage_cells, write_outcome


def repair_cells(nb, known: set[str]) -> list[str]:
    """In place: nbgrader metadata kept on the first cell naming each id of ``known`` only (nbformat's
    reading already made repeated cell ids unique). One note per repair."""
    notes, first = [], {}
    for position, cell in enumerate(nb.cells, start=1):
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
    """The first sanitize step. A graded cell copied in Jupyter carries the same metadata, which
    nbgrader's DeduplicateIds empties and OverwriteCells then fails on (the student not graded at
    all); so does an invented grade_id. The copies run as plain code. The outcome starts here."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                known = {cell.name: cell.source if cell.locked else None
                         for cell in gb.find_notebook(info["notebook"], info["assignment"]).source_cells}
            except MissingEntry:
                known = {}
        notes = repair_cells(nb, set(known))
        for note in notes:
            self.log.warning("%s", note)
        for cell in nb.cells:  # an untouched locked cell gets back the hidden tests the release lacks: no checksum warning
            if (source := known.get(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id"))) is not None:
                released = nbformat.v4.new_code_cell(source)
                ClearHiddenTests()._remove_hidden_test_region(released)
                if released.source.strip() == cell.source.strip():
                    cell.source = source
        write_outcome(str(info["student"]), str(info["assignment"]), False, UNFINISHED, notes)
        return nb, resources


def extra_credit_cell(chapter: Chapter | None) -> str | None:
    """The last graded stage's test cell carries the bonus (a graded bonus cell would raise the maximum)."""
    graded = chapter.graded_stages if chapter else []
    return graded[-1].grade_id if graded else None


class SaveExtraCredit(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: the bonus as extra credit, on top of the score; the maximum stays."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        holder = extra_credit_cell(chapter_of(info.get("assignment")))
        if holder is None:
            return nb, resources
        bonus = resources.get("autograder", {}).get("bonus")
        with Gradebook(info["db_url"]) as gb:
            try:
                grade = gb.find_grade(holder, info["notebook"], info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            grade.extra_credit = bonus or None
            gb.db.commit()
        if bonus:
            self.log.info("extra credit %g (bonus stages) on %s", bonus, holder)
        return nb, resources


class LatePenalty(LateSubmissionPlugin):
    """``per_day`` of the score for each day late or part of one, at most ``cap`` (36 hours: 20%)."""

    per_day = Float(0.1, help="share of the score taken per day (or part of a day) late").tag(config=True)
    cap = Float(0.5, help="the largest share of the score taken, however late").tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):  # called only when late
        days = math.ceil(total_seconds_late / 86400)
        share = min(self.cap, self.per_day * days)
        penalty = round(score * share, 2)
        self.log.warning("%s: %.1f hours late, %d day(s): penalty %g%% of %g = %g", student_id,
                         total_seconds_late / 3600, days, round(share * 100, 2), score, penalty)
        return penalty


class PenaltyOnScore(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` on the score without the bonus: nbgrader's own took
    20% of 110, not of 100, from a late full-marks submission with the bonus."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.init_plugin()
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            notebook.late_submission_penalty = None
            if submission.total_seconds_late > 0:
                score = max(0.0, (notebook.score or 0.0) - sum(g.extra_credit or 0.0 for g in notebook.grades))
                penalty = self.plugin_inst.late_submission_penalty(info["student"], score, submission.total_seconds_late)
                if penalty is not None:
                    notebook.late_submission_penalty = self._check_late_penalty(notebook, penalty)
            gb.db.commit()
        return nb, resources


class RecordOutcome(NbGraderPreprocessor):
    """The last autograde step: the grades are all in the gradebook now."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        write_outcome(str(info["student"]), str(info["assignment"]), True, "")
        return nb, resources


FEEDBACK_CSS = """
/* make feedback: long report lines and hints wrap instead of running off the page */
pre, .output_text pre, .jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.stage-heading { margin-top: 1.5em; border-bottom: 1px solid #ccc; }
math { font-size: 1.1em; }
"""

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$\w])\$([^$\n]+?)\$(?![\w$])", re.DOTALL)
CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)


def math_as_mathml(markdown: str) -> str:
    """The formulas of a markdown cell as MathML, which browsers draw offline; code stays as it is."""
    from latex2mathml.converter import convert  # the instructors' install has it (pyproject.toml)

    def one(match: re.Match) -> str:
        display = match.group(1) is not None
        try:
            return convert((match.group(1) if display else match.group(2)).strip(),
                           display="block" if display else "inline")
        except Exception:
            return match.group(0)

    return "".join(part if CODE.fullmatch(part) else MATH.sub(one, part) for part in CODE.split(markdown))


def _exporters_priority() -> List:
    """nbgrader's preprocessors redeclare this trait without ``config=True``, and nbconvert's
    setting of it printed "Config option ... not recognized" every run."""
    return List(NbGraderPreprocessor.display_data_priority.default_value).tag(config=True)


class FeedbackClearHiddenTests(ClearHiddenTests):
    """nbgrader's ClearHiddenTests, without the config warning (:func:`_exporters_priority`)."""

    display_data_priority = _exporters_priority()


class ReadableFeedback(NbGraderPreprocessor):
    """``make feedback``: a heading per stage, no bare ``Out[..]`` score, formulas as MathML."""

    display_data_priority = _exporters_priority()

    def preprocess(self, nb, resources):
        chapter = chapter_of(resources.get("nbgrader", {}).get("assignment"))
        stages = stage_cells(nb, chapter) if chapter else {}
        cells = []
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                cell.source = math_as_mathml(cell.source)
            elif index in stages:
                stage = stages[index]
                # the report says the points; each hint is in it once already (reports.text.hints_once)
                cell.outputs = [o for o in cell.outputs if o.get("output_type") != "execute_result"]
                cells.append(nbformat.v4.new_markdown_cell(
                    f'<h3 class="stage-heading">{stage.label}' + (" (bonus)" if stage.bonus else f" ({chapter.points(stage):g} points)")
                    + "</h3>"))
            cells.append(cell)
        nb.cells = cells
        inlining = resources.setdefault("inlining", {})
        inlining["css"] = [*inlining.get("css", []), FEEDBACK_CSS]
        return nb, resources
