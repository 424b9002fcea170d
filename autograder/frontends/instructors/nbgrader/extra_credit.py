"""``SaveExtraCredit``: the bonus stages' score (from the sandboxed run) as nbgrader extra credit."""

from __future__ import annotations

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.core.chapter import Chapter
from autograder.frontends.instructors.nbgrader.stages import chapter_of


def extra_credit_cell(chapter: Chapter | None) -> str | None:
    """The grade cell that carries the bonus as extra credit: the last graded stage's test
    cell (the bonus stage's own cell is not graded: it would raise the maximum)."""
    graded = [s for s in chapter.stages if not s.bonus] if chapter else []
    return graded[-1].grade_id if graded else None


class SaveExtraCredit(NbGraderPreprocessor):
    """After nbgrader's ``SaveAutoGrades``: the bonus stages' score (from the sandboxed run)
    becomes nbgrader's ``extra_credit`` on the last graded stage's test cell, so the
    gradebook, formgrader and the CSV count it on top of the score while the maximum stays
    the assignment's (100)."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources.get("nbgrader", {})
        chapter = chapter_of(info.get("assignment"))
        holder = extra_credit_cell(chapter)
        if holder is None or "db_url" not in info:
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
