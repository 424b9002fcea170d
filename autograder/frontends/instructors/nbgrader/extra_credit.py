"""``SaveExtraCredit``: the bonus stages' score (from the sandboxed run) as nbgrader extra credit."""

from __future__ import annotations

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.core.chapter import Chapter
from autograder.frontends.instructors.nbgrader.stages import chapter_of


def extra_credit_cell(chapter: Chapter | None) -> str | None:
    """The last graded stage's test cell carries the bonus (a graded bonus cell would raise the maximum)."""
    graded = [s for s in chapter.stages if not s.bonus] if chapter else []
    return graded[-1].grade_id if graded else None


class SaveExtraCredit(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: the bonus as extra credit, on top of the score; the maximum stays."""

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
