"""make export on a small gradebook (nbgrader's API, no notebook run): grades.csv's score and bonus,
a reason for every zero, and the Canvas and Moodle import files read back against their formats
(Canvas: Student, ID, SIS User ID, SIS Login ID, Section, then a column per assignment; Moodle:
an identifier column, then grade and feedback columns), matched through a roster."""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import pytest

# the instructors' install has nbgrader; make check-torch's venv (grading only) does not
api = pytest.importorskip("nbgrader.api", reason="nbgrader is not installed (make check-torch grades without it)")
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from traitlets.config import Configurable  # noqa: E402

from autograder.chapters import load  # noqa: E402
from autograder.frontends.instructors.nbgrader.export import CANVAS_COLUMNS, StageCsvExport  # noqa: E402
from autograder.frontends.instructors.nbgrader.plugins import extra_credit_cell  # noqa: E402

# nbgrader's add_submission builds its rows before adding them to the session
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
CHAPTER = load("ch03_attention")
A = CHAPTER.id
GRADED = [s for s in CHAPTER.stages if not s.bonus]
BONUS = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)
# The course's total (an instructor's points change it) and a late penalty planted in points.
TOTAL, LATE = CHAPTER.max_score, 20.0
# nbgrader id -> (stage 1's score, extra credit, late penalty); every other stage full marks
SUBMISSIONS = {"ada": (CHAPTER.points(GRADED[0]), BONUS, 0.0), "turingalan": (CHAPTER.points(GRADED[0]), BONUS, LATE),
               "dan": (0.0, 0.0, 0.0)}
# ghopper: in the gradebook (make students), nothing handed in; two: two notebooks, not graded;
# emmy: in the LMS's roster only; dan: graded, in no roster
CANVAS_ROSTER = f"""\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,{A} (4411),Current Score
    Points Possible,,,,,100,(read only)
"Lovelace, Ada",101,S101,ada,Sec 1,,
"Turing, Alan",102,S102,aturing,Sec 1,,
"Hopper, Grace",103,S103,ghopper,Sec 2,,
"Noether, Emmy",104,S104,emmy,Sec 2,,
"Two, Notebooks",105,S105,two,Sec 2,,
"""
PLAIN_ROSTER = """id,first_name,last_name,email
ada,Ada,Lovelace,ada@example.org
turingalan,Alan,Turing,alan@example.org
ghopper,Grace,Hopper,grace@example.org
emmy,Emmy,Noether,emmy@example.org
two,Two,Notebooks,two@example.org
"""


class Course(Configurable):
    """What the plugin reads of nbgrader's export app: its course directory."""

    def __init__(self, root: Path):
        super().__init__()
        self.coursedir = CourseDirectory(root=str(root), submitted_directory="submitted")


@pytest.fixture
def course(gradebook_url, tmp_path) -> Path:
    with api.Gradebook(gradebook_url) as gb:
        gb.add_assignment(A, duedate="2026-11-20 00:00:00 UTC")
        gb.add_notebook(A, A)
        for stage in GRADED:
            gb.add_grade_cell(stage.grade_id, A, A, max_score=CHAPTER.points(stage), cell_type="code")
        for student in (*SUBMISSIONS, "ghopper"):
            gb.add_student(student)
        for student, (first, extra, penalty) in SUBMISSIONS.items():
            gb.add_submission(A, student, timestamp="2026-11-21 12:00:00 UTC" if penalty else "2026-11-19 12:00:00 UTC")
            for stage in GRADED:
                grade = gb.find_grade(stage.grade_id, A, A, student)
                grade.auto_score = first if stage is GRADED[0] else CHAPTER.points(stage)
                grade.extra_credit = extra if stage.grade_id == extra_credit_cell(CHAPTER) else None
            gb.find_submission_notebook(A, A, student).late_submission_penalty = penalty
        gb.db.commit()
    two = tmp_path / "submitted" / "two" / A
    two.mkdir(parents=True)
    for name in ("draft.ipynb", "final.ipynb"):
        (two / name).write_text("{}")
    return tmp_path


def export(course: Path, gradebook_url: str, **settings) -> dict[str, list[dict[str, str]]]:
    """make export with these settings: each file written, read back (rows as dicts)."""
    plugin = StageCsvExport(parent=Course(course), to=str(course / "grading" / "grades.csv"), **settings)
    with api.Gradebook(gradebook_url) as gb:
        plugin.export(gb)
    files = {}
    for path in sorted((course / "grading").glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            files[path.name] = [{"": ",".join(reader.fieldnames)}, *reader]  # the header first
    return files


def by(rows: list[dict], column: str) -> dict[str, dict]:
    return {row[column]: row for row in rows[1:]}


def test_score_is_out_of_max_score_with_the_bonus_beside_it(course, gradebook_url):
    files = export(course, gradebook_url)
    assert list(files) == ["grades.csv"]  # no roster, no LMS file
    grades = by(files["grades.csv"], "student_id")
    assert {s: (r["raw_score"], r["extra_credit"], r["late_submission_penalty"], r["score"]) for s, r in grades.items()} == {
        "ada": (f"{TOTAL + BONUS:g}", f"{BONUS:g}", "0", f"{TOTAL:g}"),
        "turingalan": (f"{TOTAL + BONUS:g}", f"{BONUS:g}", f"{LATE:g}", f"{TOTAL - LATE:g}"),  # from the total: the bonus is never reduced
        "dan": (f"{TOTAL - CHAPTER.points(GRADED[0]):g}", "0", "0", f"{TOTAL - CHAPTER.points(GRADED[0]):g}"),
        "ghopper": ("0", "0", "0", "0"), "two": ("0", "0", "0", "0")}
    assert grades["ghopper"]["warnings"] == "no submission"  # a zero always has its reason
    assert grades["two"]["warnings"].startswith("NOT GRADED: 2 notebooks")
    assert all(r["max_score"] == f"{TOTAL:g}" for r in grades.values())


@pytest.mark.parametrize("bonus, ada, late", [("inside", TOTAL + BONUS, TOTAL - LATE + BONUS),
                                               ("capped", TOTAL, min(TOTAL, TOTAL - LATE + BONUS))])
def test_the_bonus_inside_or_capped(course, gradebook_url, bonus, ada, late):
    files = export(course, gradebook_url, bonus=bonus, roster=str(write(course, "canvas.csv", CANVAS_ROSTER)))
    grades = by(files["grades.csv"], "student_id")
    assert (grades["ada"]["score"], grades["turingalan"]["score"]) == (f"{ada:g}", f"{late:g}")
    assert grades["ada"]["extra_credit"] == f"{BONUS:g}"  # still said, not added twice
    canvas = files["canvas-grades.csv"]
    assert canvas[0][""] == ",".join(CANVAS_COLUMNS + [f"{A} (4411)"])  # no bonus column
    assert by(canvas, "Student")["Lovelace, Ada"][f"{A} (4411)"] == f"{ada:g}"


def write(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_canvas_import_file_from_a_canvas_gradebook_export(course, gradebook_url):
    files = export(course, gradebook_url, roster=str(write(course, "canvas.csv", CANVAS_ROSTER)))
    canvas = files["canvas-grades.csv"]
    # Canvas's identity columns, then the roster's own assignment column (its id: no new assignment)
    assert canvas[0][""] == ",".join(CANVAS_COLUMNS + [f"{A} (4411)", f"{A} bonus"])
    rows = by(canvas, "Student")
    assert list(rows) == ["Lovelace, Ada", "Turing, Alan", "Hopper, Grace", "Noether, Emmy", "Two, Notebooks"]  # no Points Possible
    assert {s: (r["ID"], r["SIS Login ID"], r["Section"], r[f"{A} (4411)"], r[f"{A} bonus"]) for s, r in rows.items()} == {
        "Lovelace, Ada": ("101", "ada", "Sec 1", f"{TOTAL:g}", f"{BONUS:g}"),  # SIS Login ID == nbgrader id
        "Turing, Alan": ("102", "aturing", "Sec 1", f"{TOTAL - LATE:g}", f"{BONUS:g}"),  # the name Canvas's downloads carry
        "Hopper, Grace": ("103", "ghopper", "Sec 2", "0", "0"),
        "Noether, Emmy": ("104", "emmy", "Sec 2", "0", "0"),
        "Two, Notebooks": ("105", "two", "Sec 2", "", "")}  # not graded: Canvas keeps what it has
    missing = {(r["student_id"], r["roster_student"]): (r["grade"], r["reason"]) for r in files["lms-missing.csv"][1:]}
    assert missing == {("ghopper", "Hopper, Grace"): ("0", "no submission"), ("", "Noether, Emmy"): ("0", "no submission"),
                       ("two", "Two, Notebooks"): ("", by(files["grades.csv"], "student_id")["two"]["warnings"]),
                       ("dan", ""): (f"{TOTAL - CHAPTER.points(GRADED[0]):g}", "not in the roster: grade not exported")}


def test_moodle_import_file_from_the_class_list(course, gradebook_url):
    files = export(course, gradebook_url, roster=str(write(course, "class.csv", PLAIN_ROSTER)))
    moodle = files["moodle-grades.csv"]
    assert moodle[0][""] == f"email,{A},{A} bonus,{A} feedback"  # Moodle maps email to the user, each column to an item
    assert {r["email"]: (r[A], r[f"{A} bonus"], r[f"{A} feedback"]) for r in moodle[1:]} == {
        "ada@example.org": (f"{TOTAL:g}", f"{BONUS:g}", ""), "alan@example.org": (f"{TOTAL - LATE:g}", f"{BONUS:g}", "late by 36.0 h"),
        "grace@example.org": ("0", "0", "no submission"), "emmy@example.org": ("0", "0", "no submission"),
        "two@example.org": ("", "", by(files["grades.csv"], "student_id")["two"]["warnings"])}
    assert "canvas-grades.csv" not in files
    assert {r["roster_student"] for r in files["lms-missing.csv"][1:]} == {"grace@example.org", "emmy@example.org",
                                                                          "two@example.org", ""}


def test_two_roster_rows_matching_one_student_export_nothing_for_them(course, gradebook_url):
    roster = PLAIN_ROSTER.replace("turingalan,Alan,Turing,alan@example.org", "ada,Ada,Lovelace,ada2@example.org")
    files = export(course, gradebook_url, roster=str(write(course, "class.csv", roster)))
    rows = {r["email"]: r[A] for r in files["moodle-grades.csv"][1:]}
    assert rows["ada@example.org"] == rows["ada2@example.org"] == "0"
    reasons = {r["student_id"]: r["reason"] for r in files["lms-missing.csv"][1:]}
    assert reasons["ada"] == "two roster rows match: grade not exported"


@pytest.mark.parametrize("roster, says", [
    (None, "cannot read the roster"),
    ("name,grade\nada,1\n", "neither Canvas's columns"),
    ("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n", "has no students"),
    (b"email\n\xff\xfe\n", "cannot read the roster"),
])
def test_a_bad_roster_is_refused_before_anything_is_written(course, gradebook_url, caplog, roster, says):
    path = course / "roster.csv"
    if roster is not None:
        path.write_bytes(roster if isinstance(roster, bytes) else roster.encode())
    with caplog.at_level(logging.ERROR), pytest.raises(SystemExit) as stop:
        export(course, gradebook_url, roster=str(path))
    assert stop.value.code == 1 and says in caplog.text and str(path) in caplog.text
    assert not (course / "grading").exists()


def test_an_unknown_bonus_place_is_refused(course, gradebook_url, caplog):
    with caplog.at_level(logging.ERROR), pytest.raises(SystemExit):
        export(course, gradebook_url, bonus="outside")
    assert "choose one of separate, inside, capped" in caplog.text and not (course / "grading").exists()


def test_a_canvas_export_without_the_sis_columns_matches_by_name(course, gradebook_url):
    roster = f'Student,ID,Section,{A}\n"Turing, Alan",102,Sec 1,\n"Lovelace, Ada",101,,\n'  # what some roles download
    files = export(course, gradebook_url, roster=str(write(course, "canvas.csv", roster)))
    canvas = files["canvas-grades.csv"]
    assert canvas[0][""] == ",".join(CANVAS_COLUMNS + [A, f"{A} bonus"])
    assert {r["Student"]: (r["ID"], r["SIS Login ID"], r[A]) for r in canvas[1:]} == {
        "Turing, Alan": ("102", "", f"{TOTAL - LATE:g}"), "Lovelace, Ada": ("101", "", "0")}  # ada is not Lovelace, Ada's name
    assert {r["student_id"]: r["reason"] for r in files["lms-missing.csv"][1:]}["ada"] == "not in the roster: grade not exported"
