"""``make export``: grading/grades.csv with a column per stage, and with a roster the file an LMS
imports: a Canvas gradebook export gives canvas-grades.csv, a plain CSV moodle-grades.csv. Every
roster student gets a row; lms-missing.csv says why a grade is 0, empty, or not exported.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from autograder.frontends.instructors.nbgrader.stages import (
    UNFINISHED,
    by_grade_id,
    chapter_of,
    csv_column,
    read_outcome,
    submitted_notebook,
)

# Canvas's gradebook export and import: these columns identify the student, the rest are assignments.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# Moodle's CSV import maps one of these to a user (Email address, Username, ID number): the first the roster has.
MOODLE_IDS = ("email", "username", "idnumber")
NO_SUBMISSION = "no submission"
# grading/lms-missing.csv: who has no grade in the LMS file (or a 0 for nothing handed in), and why
MISSING_COLUMNS = ["assignment", "student_id", "roster_student", "grade", "reason"]


@dataclass
class Roster:
    lms: str  # "canvas" or "moodle": which file it makes
    columns: list[str]
    rows: list[dict[str, str]]
    identifier: str  # Moodle's user identifier column; Canvas: its Student column

    def keys(self, row: dict[str, str]) -> set[str]:
        """The values a student id matches (case ignored): Canvas's ids or its file-name form of the
        name ("Doe, Jane": doejane); a plain roster's ``id``, else its identifier."""
        if self.lms == "canvas":
            values = [row.get("SIS Login ID"), row.get("SIS User ID"), row["ID"], re.sub(r"[\W_]", "", row["Student"] or "")]
        else:
            values = [row.get("id") or row[self.identifier]]
        return {(v or "").strip().casefold() for v in values} - {""}


def write_lms_files(roster: Roster, rows: list[dict[str, str]], assignments: list[str], bonus_column: bool,
                    folder: Path) -> list[Path]:
    """The LMS file and lms-missing.csv: no row is 0; a failed grading an empty grade (the LMS's stays)."""
    graded: dict[str, dict[str, dict]] = {}
    for row in rows:
        graded.setdefault(row["student_id"], {})[row["assignment"]] = row
    index: dict[str, int | None] = {}
    for number, entry in enumerate(roster.rows):
        for key in roster.keys(entry):
            index[key] = number if index.get(key, number) == number else None  # None: two rows share it
    matched, missing = {}, []
    for student_id in graded:
        key = student_id.casefold()
        number = index.get(key)
        if number is None or number in matched:
            why = ("not in the roster" if key not in index else "two roster rows match" if number is None
                   else f"{matched[number]} matches the same roster row")
            missing += [{"assignment": a, "student_id": student_id, "grade": row["score"], "reason": f"{why}: grade not exported"}
                        for a, row in graded[student_id].items()]
        else:
            matched[number] = student_id
    # an assignment's column: the roster's own ("ch03_attention (1234)" in a Canvas export), else its name
    heads = {a: next((c for c in roster.columns if c == a or c.startswith(f"{a} (")), a) for a in assignments}
    identity = CANVAS_COLUMNS if roster.lms == "canvas" else [roster.identifier]
    columns = list(identity)
    for a in assignments:
        columns += [heads[a]] + [f"{a} bonus"] * bonus_column + [f"{a} feedback"] * (roster.lms == "moodle")
    lines = []
    for number, entry in enumerate(roster.rows):
        line = {c: entry.get(c) or "" for c in identity}
        for a in assignments:
            row = graded.get(matched.get(number, ""), {}).get(a)
            reason = row["warnings"] if row else NO_SUBMISSION
            failed = reason.startswith(NOT_GRADED)
            grade, extra = ("", "") if failed else (row["score"], row["extra_credit"]) if row else ("0", "0")
            line.update({heads[a]: grade, f"{a} bonus": extra, f"{a} feedback": reason})
            if failed or reason == NO_SUBMISSION:
                missing.append({"assignment": a, "student_id": matched.get(number, ""), "roster_student": line[roster.identifier],
                                "grade": grade, "reason": reason})
        lines.append(line)
    return [write_csv(folder / f"{roster.lms}-grades.csv", columns, lines),
            write_csv(folder / "lms-missing.csv", MISSING_COLUMNS, missing)]


def write_csv(path: Path, header: list[str], rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


# A row whose grades are not this submission's: zeros, and this before the reason.
NOT_GRADED = "NOT GRADED"
# Where the bonus (nbgrader's extra credit) goes: beside the score in its own column, added to
# it, or added but capped at max_score.
BONUS_PLACES = ("separate", "inside", "capped")


class StageCsvExport(ExportPlugin):
    """A row per student and assignment; a submission not graded by its last autograde is zeros and NOT GRADED."""

    roster = Unicode("", help="the LMS's roster (a Canvas gradebook export, or a CSV with email, username or idnumber): "
                     "also write its import file beside grades.csv").tag(config=True)
    bonus = Unicode("separate", help=f"where the bonus goes: {', '.join(BONUS_PLACES)}").tag(config=True)

    def export(self, gradebook) -> None:
        dest = Path(self.to or "grading/grades.csv")
        # bad input is refused with a message, before anything is written
        if self.bonus not in BONUS_PLACES:
            self.refuse(f"bonus={self.bonus!r}: choose one of {', '.join(BONUS_PLACES)}")
        roster = self.read_roster() if self.roster else None
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
        coursedir = self.parent.coursedir
        known = {student.id: student for student in gradebook.students}
        for assignment in assignments:
            folders = {f.parent.name: f for f in Path(coursedir.root, coursedir.submitted_directory).glob(f"*/{assignment.name}")
                       if f.is_dir()}
            submissions = {submission.student_id: submission for submission in assignment.submissions}
            for student_id in sorted(s for s in set(known) | set(folders) if not wanted_students or s in wanted_students):
                row = {"assignment": assignment.name, "student_id": student_id, "max_score": f"{assignment.max_score:g}",
                       **{key: getattr(known.get(student_id), key, None) or "" for key in ("last_name", "first_name", "email")},
                       **{c: "0" for c in stage_columns}}
                outcome = read_outcome(student_id, assignment.name, coursedir.root) or {}
                submission = submissions.get(student_id)
                notes = []
                if student_id in folders:
                    chosen, note = submitted_notebook(folders[student_id], assignment.name)
                    notes.append(note if chosen else f"{NOT_GRADED}: {note}")
                    if chosen and outcome.get("graded") is False:
                        # the last autograde failed: the gradebook's grades (zeros, or an earlier
                        # run's) are not this submission's
                        notes.insert(0, f"{NOT_GRADED}: {outcome.get('reason') or UNFINISHED}")
                    if not chosen or outcome.get("graded") is False:
                        submission = None
                notes += outcome.get("notes") or []
                if submission is None:  # nothing submitted, nothing gradable, or not graded: zero everywhere
                    row.update(timestamp="", raw_score="0", extra_credit="0", late_submission_penalty="0", score="0")
                    if not any(notes):
                        notes.append(f"{NOT_GRADED}: not autograded yet" if student_id in folders else NO_SUBMISSION)
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
        written = [write_csv(dest, columns, rows)]
        if roster:
            written += write_lms_files(roster, rows, [a.name for a in assignments], self.bonus == "separate", dest.parent)
        print("\n".join(map(str, written)))

    def read_roster(self) -> Roster:
        path = self.roster
        try:
            with open(path, newline="", encoding="utf-8-sig") as handle:  # Excel and Canvas write a BOM
                reader = csv.DictReader(handle)
                rows, columns = list(reader), list(reader.fieldnames or [])
        except (OSError, UnicodeDecodeError, csv.Error) as err:
            self.refuse(f"cannot read the roster {path}: {err}")
        if "Student" in columns and "ID" in columns:  # Canvas leaves the SIS columns out for some roles
            # Canvas's "Points Possible" row (and older exports' "Muted" row) has no ID: not a student
            roster = Roster("canvas", columns, [r for r in rows if (r["ID"] or "").strip()], "Student")
        else:
            identifier = next((c for c in MOODLE_IDS if c in columns), None)
            if identifier is None:
                self.refuse(f"the roster {path} has neither Canvas's columns (Student, ID, ...) nor a column "
                            f"{', '.join(MOODLE_IDS[:-1])} or {MOODLE_IDS[-1]} (Moodle's); its columns: {', '.join(columns) or 'none'}")
            roster = Roster("moodle", columns, rows, identifier)
        if not roster.rows:
            self.refuse(f"the roster {path} has no students")
        return roster

    def refuse(self, message: str) -> None:
        self.log.error("%s", message)
        raise SystemExit(1)
