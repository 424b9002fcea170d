"""``make export LMS_ROSTER=...``: grades.csv as the file an LMS imports, matched through the
roster: a Canvas gradebook export gives canvas-grades.csv, a plain CSV moodle-grades.csv. Every
roster student gets a row; lms-missing.csv says why a grade is 0, empty, or not exported.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

# Canvas's gradebook export and import: these columns identify the student, the rest are assignments.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# Moodle's CSV import maps one of these to a user (Email address, Username, ID number): the first the roster has.
MOODLE_IDS = ("email", "username", "idnumber")
NO_SUBMISSION = "no submission"
# grading/lms-missing.csv: who has no grade in the LMS file (or a 0 for nothing handed in), and why
MISSING_COLUMNS = ["assignment", "student_id", "roster_student", "grade", "reason"]


class RosterError(ValueError):
    """A roster that cannot be used; the message says why."""


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


def read_roster(path: str) -> Roster:
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:  # Excel and Canvas write a BOM
            reader = csv.DictReader(handle)
            rows, columns = list(reader), list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise RosterError(f"cannot read the roster {path}: {err}") from None
    if "Student" in columns and "ID" in columns:  # Canvas leaves the SIS columns out for some roles
        # Canvas's "Points Possible" row (and older exports' "Muted" row) has no ID: not a student
        roster = Roster("canvas", columns, [r for r in rows if (r["ID"] or "").strip()], "Student")
    else:
        identifier = next((c for c in MOODLE_IDS if c in columns), None)
        if identifier is None:
            raise RosterError(f"the roster {path} has neither Canvas's columns (Student, ID, ...) nor a column "
                              f"{', '.join(MOODLE_IDS[:-1])} or {MOODLE_IDS[-1]} (Moodle's); its columns: {', '.join(columns) or 'none'}")
        roster = Roster("moodle", columns, rows, identifier)
    if not roster.rows:
        raise RosterError(f"the roster {path} has no students")
    return roster


def write_lms_files(roster: Roster, rows: list[dict[str, str]], assignments: list[str], bonus_column: bool,
                    folder: Path, not_graded: str) -> list[Path]:
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
            failed = reason.startswith(not_graded)
            grade, extra = ("", "") if failed else (row["score"], row["extra_credit"]) if row else ("0", "0")
            line.update({heads[a]: grade, f"{a} bonus": extra, f"{a} feedback": reason})
            if failed or reason == NO_SUBMISSION:
                missing.append({"assignment": a, "student_id": matched.get(number, ""), "roster_student": line[roster.identifier],
                                "grade": grade, "reason": reason})
        lines.append(line)
    lms_file, report = folder / f"{roster.lms}-grades.csv", folder / "lms-missing.csv"
    for path, header, content in ((lms_file, columns, lines), (report, MISSING_COLUMNS, missing)):
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, header, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(content)
    return [lms_file, report]
