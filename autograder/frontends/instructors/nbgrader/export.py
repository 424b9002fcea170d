"""``StageCsvExport`` (``nbgrader export``, ``make export``): grading/grades.csv with a column per stage,
and with a roster the file an LMS imports (:mod:`.lms`)."""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from autograder.frontends.instructors.nbgrader.lms import RosterError, read_roster, write_lms_files
from autograder.frontends.instructors.nbgrader.outcome import UNFINISHED, read_outcome
from autograder.frontends.instructors.nbgrader.stages import by_grade_id, chapter_of, csv_column, submitted_notebook

# A row whose grades are not this submission's: zeros, and this before the reason.
NOT_GRADED = "NOT GRADED"
# Where the bonus (nbgrader's extra credit) goes: beside the score in its own column, added to
# it, or added but capped at max_score.
BONUS_PLACES = ("separate", "inside", "capped")


class StageCsvExport(ExportPlugin):
    """A row per student and assignment, a column per graded stage, nbgrader's totals and
    ``warnings``. A submission not graded, or whose last autograde failed (the gradebook may hold
    an earlier run's grades), is zeros with ``NOT GRADED: <reason>``."""

    roster = Unicode("", help="the LMS's roster (a Canvas gradebook export, or a CSV with email, username or idnumber): "
                     "also write its import file beside grades.csv").tag(config=True)
    bonus = Unicode("separate", help=f"where the bonus goes: {', '.join(BONUS_PLACES)}").tag(config=True)

    def export(self, gradebook) -> None:
        dest = Path(self.to or "grading/grades.csv")
        # bad input is refused with a message, before anything is written
        if self.bonus not in BONUS_PLACES:
            self.refuse(f"bonus={self.bonus!r}: choose one of {', '.join(BONUS_PLACES)}")
        try:
            roster = read_roster(self.roster) if self.roster else None
        except RosterError as err:
            self.refuse(str(err))
        dest.parent.mkdir(parents=True, exist_ok=True)
        wanted_students = {str(s) for s in self.student}
        wanted_assignments = {str(a) for a in self.assignment}
        assignments = [a for a in gradebook.assignments if not wanted_assignments or a.name in wanted_assignments]
        graded = {cell.name for a in assignments for nb in a.notebooks for cell in nb.grade_cells}
        stages = {grade_id: stage for a in assignments for grade_id, stage in by_grade_id(chapter_of(a.name)).items()}
        stage_columns = list(dict.fromkeys(csv_column(s) for s in stages.values() if s.grade_id in graded))
        columns = ["assignment", "student_id", "last_name", "first_name", "email", "timestamp",
                   *stage_columns, "raw_score", "extra_credit", "late_submission_penalty", "score", "max_score",
                   "warnings"]
        rows = []
        coursedir = getattr(self.parent, "coursedir", None)
        root = coursedir.root if coursedir is not None else "."
        for assignment in assignments:
            folders = submission_folders(coursedir, assignment.name)
            known = {student.id: student for student in gradebook.students}
            for student_id in sorted(set(known) | set(folders)):
                if wanted_students and student_id not in wanted_students:
                    continue
                student = known.get(student_id)
                row = {"assignment": assignment.name, "student_id": student_id,
                       "last_name": getattr(student, "last_name", None) or "",
                       "first_name": getattr(student, "first_name", None) or "", "email": getattr(student, "email", None) or "",
                       "max_score": f"{assignment.max_score:g}", **{c: "0" for c in stage_columns}}
                notes, chosen = [], None
                if student_id in folders:
                    chosen, note = submitted_notebook(folders[student_id], assignment.name)
                    notes.append(note if chosen else f"{NOT_GRADED}: {note}")
                outcome = read_outcome(student_id, assignment.name, root) or {}
                try:
                    submission = gradebook.find_submission(assignment.name, student_id)
                except MissingEntry:
                    submission = None
                if student_id in folders and chosen and outcome.get("graded") is False:
                    # the last autograde failed: the gradebook's grades (zeros, or an earlier
                    # run's) are not this submission's
                    notes.insert(0, f"{NOT_GRADED}: {outcome.get('reason') or UNFINISHED}")
                if student_id in folders and (not chosen or outcome.get("graded") is False):
                    submission = None
                notes += outcome.get("notes") or []
                if submission is None:  # nothing submitted, nothing gradable, or not graded: zero everywhere
                    row.update(timestamp="", raw_score="0", extra_credit="0", late_submission_penalty="0", score="0")
                    if not any(notes):
                        notes.append(f"{NOT_GRADED}: not autograded yet" if student_id in folders else "no submission")
                else:
                    for notebook in submission.notebooks:
                        for grade in notebook.grades:
                            stage = stages.get(grade.name)
                            if stage is not None and csv_column(stage) in row:  # no score yet (a manual grade pending): left empty
                                # the stage's own score: extra credit (the bonus) has its own column
                                row[csv_column(stage)] = "" if grade.score is None else f"{grade.score - (grade.extra_credit or 0):g}"
                    penalty = submission.late_submission_penalty or 0.0
                    extra = sum(g.extra_credit or 0.0 for nb in submission.notebooks for g in nb.grades)
                    # nbgrader's score includes the bonus; the penalty is a share of the score without it
                    score = submission.score - penalty - (extra if self.bonus == "separate" else 0)
                    if self.bonus == "capped":
                        score = min(score, assignment.max_score)
                    row.update(timestamp=str(submission.timestamp or ""), raw_score=f"{submission.score:g}",
                               extra_credit=f"{extra:g}", late_submission_penalty=f"{penalty:g}", score=f"{max(0.0, score):g}")
                    if submission.total_seconds_late:
                        notes.append(f"late by {submission.total_seconds_late / 3600:.1f} h")
                row["warnings"] = "; ".join(n for n in notes if n)
                rows.append(row)
        with open(dest, "w", newline="") as handle:
            writer = csv.DictWriter(handle, columns)
            writer.writeheader()
            writer.writerows(rows)
        written = [dest]
        if roster:
            written += write_lms_files(roster, rows, [a.name for a in assignments], self.bonus == "separate", dest.parent, NOT_GRADED)
        print("\n".join(map(str, written)))

    def refuse(self, message: str) -> None:
        self.log.error("%s", message)
        raise SystemExit(1)


def submission_folders(coursedir, assignment: str) -> dict[str, Path]:
    if coursedir is None:
        return {}
    pattern = Path(coursedir.format_path(coursedir.submitted_directory, "*", assignment))
    return {folder.parent.name: folder for folder in sorted(pattern.parent.parent.glob(f"*/{assignment}")) if folder.is_dir()}
