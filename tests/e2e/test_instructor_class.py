"""Issue 15: an instructor's class through the real nbgrader flow.

One temporary course built from this repository (sources, config, Makefile), graded with
the real commands: make release, make duedate, make students, then nine submissions: on time,
late (timestamp.txt after the due date), a bonus earner, the same late, two renamed notebooks
(``ch03_attention (1).ipynb`` beside a Jupyter checkpoint, ``Copy_of_ch03_attention.ipynb``
untouched), a folder with two notebooks, the solutions with a graded cell pasted twice, and
one graded at full marks whose later hand-ins are regraded; make autograde JOBS=2, make
export, and students regraded with make autograde STUDENT= (issues 15 and 35).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import RELEASE, REPO, SOLUTION, late_penalty, link_venv
from tools.simulated_course import student_notebook

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends.instructors.nbgrader.stages import csv_column

pytestmark = pytest.mark.slow  # minutes: make check-slow (docs/maintainers.md)

ASSIGNMENT = CHAPTER.id
GRADED = [s for s in CHAPTER.stages if not s.bonus]
BONUS_MAX = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)
# The course's total and nbgrader_config.py's late rule: the expected grades follow an instructor's edits.
TOTAL = f"{CHAPTER.max_score:g}"
PENALTY = late_penalty(CHAPTER.max_score, 2)  # 36 hours late: two days started
AFTER_PENALTY = f"{CHAPTER.max_score - PENALTY:g}"
DUE = "2026-11-20 07:00:00 -0500"  # 12:00 UTC: an offset in hours, not -500 seconds
DUE_STORED = "2026-11-20 12:00:00 UTC"
PASTED = "stage1_softmax_solution"
ON_TIME = "2026-11-20 11:59:00 UTC"
LATE = "2026-11-22 00:00:00 UTC"  # 36 hours late: two days started, 2 x LatePenalty.per_day of the score
ROSTER = "id,first_name,last_name,email\nontime,Ada,Lovelace,ada@example.org\nlate,Alan,Turing,alan@example.org\n"


def _make(course: Path, *args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess:
    link_venv(course)
    proc = subprocess.run(["make", "--no-print-directory", *args, f"STAMP={course / '.stamp'}"],
                          cwd=course, capture_output=True, text=True, timeout=timeout,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")} | {"COLUMNS": "160"})
    if check:
        assert proc.returncode == 0, f"make {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _folder(course: Path, student: str) -> Path:
    folder = course / "grading" / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    return folder


def _write(path: Path, notebook: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))


@pytest.fixture(scope="module")
def instructor_class(tmp_path_factory):
    release, solution = json.loads(RELEASE.read_text()), json.loads(SOLUTION.read_text())
    graded_only = student_notebook(release, solution, done={s.number for s in GRADED})
    course = tmp_path_factory.mktemp("instructor") / "course"
    course.mkdir()
    for name in ("Makefile", "students.mk", "nbgrader_config.py", "pyproject.toml", "constraints.txt"):
        (course / name).write_bytes((REPO / name).read_bytes())
    shutil.copytree(REPO / "solutions", course / "solutions", ignore=shutil.ignore_patterns(".*"))
    (course / ".stamp").touch()  # the environment is this test's; make must not install one
    _make(course, "release")
    _make(course, "duedate", f"DUE={DUE}")
    (course / "roster.csv").write_text(ROSTER)
    _make(course, "students", "ROSTER=roster.csv")

    ontime = _folder(course, "ontime")
    _write(ontime / f"{ASSIGNMENT}.ipynb", graded_only)
    (ontime / "timestamp.txt").write_text(ON_TIME)
    late = _folder(course, "late")
    _write(late / f"{ASSIGNMENT}.ipynb", graded_only)
    (late / "timestamp.txt").write_text(LATE)
    _write(_folder(course, "bonus") / f"{ASSIGNMENT}.ipynb", solution)
    latebonus = _folder(course, "latebonus")
    _write(latebonus / f"{ASSIGNMENT}.ipynb", solution)
    (latebonus / "timestamp.txt").write_text(LATE)
    _write(_folder(course, "pasted") / f"{ASSIGNMENT}.ipynb", _pasted(solution))
    _write(_folder(course, "regraded") / f"{ASSIGNMENT}.ipynb", solution)
    renamed = _folder(course, "renamed1")
    _write(renamed / f"{ASSIGNMENT} (1).ipynb", student_notebook(release, solution, mistake=3))
    _write(renamed / ".ipynb_checkpoints" / f"{ASSIGNMENT}-checkpoint.ipynb", release)
    _write(_folder(course, "renamed2") / f"Copy_of_{ASSIGNMENT}.ipynb", release)
    two = _folder(course, "two")
    _write(two / "draft.ipynb", graded_only)
    _write(two / "final.ipynb", solution)
    handed_in = {p: p.read_bytes() for p in (course / "grading" / "submitted").rglob("*") if p.is_file()}

    started = time.monotonic()
    autograde = _make(course, "autograde", "JOBS=2", check=False)
    seconds = time.monotonic() - started
    _make(course, "export")
    _make(course, "feedback")
    if os.environ.get("INSTRUCTOR_CLASS_KEEP"):  # screenshots, the closing note's log
        shutil.copytree(course, os.environ["INSTRUCTOR_CLASS_KEEP"], dirs_exist_ok=True)
    print(f"\nmake autograde (6 submissions, JOBS=2): {seconds:.0f} s\n{autograde.stdout}{autograde.stderr}")
    with open(course / "grading" / "grades.csv", newline="") as handle:
        grades = {row["student_id"]: row for row in csv.DictReader(handle)}
    return course, autograde, grades, handed_in


def _pasted(notebook: dict) -> dict:
    """``notebook`` with its stage-1 answer cell copied in Jupyter (metadata and all) and pasted
    below itself twice."""
    nb = json.loads(json.dumps(notebook))
    where = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == PASTED)
    nb["cells"][where + 1:where + 1] = [json.loads(json.dumps(nb["cells"][where])) for _ in range(2)]
    return nb


def _export(course: Path) -> dict[str, dict]:
    _make(course, "export")
    with open(course / "grading" / "grades.csv", newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def _total(row: dict) -> float:
    return sum(float(row[csv_column(s)]) for s in GRADED)


def test_late_work_is_penalised_by_the_configured_rule(instructor_class):
    _, _, grades, _ = instructor_class
    ontime, late = grades["ontime"], grades["late"]
    assert (ontime["raw_score"], ontime["late_submission_penalty"], ontime["score"]) == (TOTAL, "0", TOTAL)
    assert ontime["timestamp"].startswith("2026-11-20 11:59")
    assert "late" not in ontime["warnings"]
    assert late["raw_score"] == TOTAL and late["late_submission_penalty"] == f"{PENALTY:g}" and late["score"] == AFTER_PENALTY
    assert "late by 36.0 h" in late["warnings"]
    assert (late["first_name"], late["last_name"]) == ("Alan", "Turing")  # make students


def test_bonus_is_extra_credit_beside_the_total(instructor_class):
    if not BONUS_MAX:
        pytest.skip("the course has no bonus stage")
    _, _, grades, _ = instructor_class
    bonus = grades["bonus"]
    assert _total(bonus) == CHAPTER.max_score and bonus["max_score"] == TOTAL
    assert float(bonus["extra_credit"]) == BONUS_MAX > 0
    assert float(bonus["raw_score"]) == CHAPTER.max_score + BONUS_MAX and bonus["score"] == TOTAL  # the bonus beside it, as make test says
    assert grades["ontime"]["extra_credit"] == "0"


def test_the_lms_files_have_a_row_for_every_roster_student(instructor_class):
    course, _, grades, _ = instructor_class
    # the class list make students imported, as Moodle's roster: matched on its id column
    _make(course, "export", "LMS_ROSTER=roster.csv")
    with open(course / "grading" / "moodle-grades.csv", newline="") as handle:
        moodle = list(csv.reader(handle))
    assert moodle == [["email", ASSIGNMENT, f"{ASSIGNMENT} bonus", f"{ASSIGNMENT} feedback"],
                      ["ada@example.org", TOTAL, "0", ""], ["alan@example.org", AFTER_PENALTY, "0", "late by 36.0 h"]]
    # Canvas's gradebook export (its Points Possible row too), one student who never handed anything in
    (course / "canvas.csv").write_text(f"Student,ID,SIS User ID,SIS Login ID,Section,{ASSIGNMENT} (77),Final Score\n"
                                       "    Points Possible,,,,,100,(read only)\n" + "".join(
                                           f'"{name}",{n},S{n},{login},A,,\n' for n, (name, login) in enumerate(
                                               [("Lovelace, Ada", "ontime"), ("Bonus, Bea", "bonus"), ("Absent, Abe", "absent"),
                                                ("Two, Tia", "two")])))
    _make(course, "export", "LMS_ROSTER=canvas.csv")
    with open(course / "grading" / "canvas-grades.csv", newline="") as handle:
        canvas = list(csv.reader(handle))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{ASSIGNMENT} (77)", f"{ASSIGNMENT} bonus"]
    assert [[row[0], *row[5:]] for row in canvas[1:]] == [["Lovelace, Ada", TOTAL, "0"], ["Bonus, Bea", TOTAL, f"{BONUS_MAX:g}"],
                                                 ["Absent, Abe", "0", "0"], ["Two, Tia", "", ""]]
    with open(course / "grading" / "lms-missing.csv", newline="") as handle:
        missing = {row["roster_student"] or row["student_id"]: row["reason"] for row in csv.DictReader(handle)}
    assert missing["Absent, Abe"] == "no submission" and missing["Two, Tia"] == grades["two"]["warnings"]
    assert missing["late"] == "not in the roster: grade not exported"


def test_renamed_notebooks_are_graded_with_a_warning(instructor_class):
    course, autograde, grades, handed_in = instructor_class
    one, two = grades["renamed1"], grades["renamed2"]
    assert 0 < float(one[csv_column(GRADED[2])]) < CHAPTER.points(GRADED[2])  # stage 3's mistake, graded
    assert CHAPTER.max_score - CHAPTER.points(GRADED[2]) < float(one["score"]) < CHAPTER.max_score  # only stage 3 lost points
    assert one["warnings"] == f"renamed notebook: graded {ASSIGNMENT} (1).ipynb as {ASSIGNMENT}.ipynb"
    assert two["score"] == "0" and two["warnings"] == f"renamed notebook: graded Copy_of_{ASSIGNMENT}.ipynb as {ASSIGNMENT}.ipynb"
    assert (course / "grading" / "autograded" / "renamed2" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    # the students' folders are as they were handed in
    now = {p: p.read_bytes() for p in (course / "grading" / "submitted").rglob("*") if p.is_file()}
    assert now == handed_in


def test_two_notebooks_are_a_clear_error_never_a_silent_zero(instructor_class):
    _, autograde, grades, _ = instructor_class
    row = grades["two"]
    assert row["score"] == "0"
    assert row["warnings"].startswith(f"NOT GRADED: 2 notebooks and none named {ASSIGNMENT}.ipynb (draft.ipynb, final.ipynb)")
    assert autograde.returncode != 0  # make autograde says not everyone was graded
    assert "draft.ipynb, final.ipynb" in autograde.stdout


def test_autograde_log_shows_what_matters(instructor_class):
    _, autograde, _, _ = instructor_class
    out = autograde.stdout + autograde.stderr
    assert "has changed" not in out  # no checksum warning for untouched test cells (renamed2 is the release)
    assert "Traceback" not in out and "seconds late" not in out
    assert "not graded: not graded" not in out.lower()
    table = out[out.index("one row per student, problems first"):]
    order = [name for line in table.splitlines() for name in ("two", "late", "renamed1", "renamed2", "ontime", "bonus")
             if line.strip("│┃ ").startswith(name + " ")]
    assert order[0] == "two", table  # the one not graded first
    assert set(order[1:4]) == {"late", "renamed1", "renamed2"} and set(order[4:]) == {"ontime", "bonus"}, table
    assert "Autograded 8/9 submissions" in out


def test_one_student_is_regraded_alone(instructor_class):
    course, _, _, _ = instructor_class
    again = _make(course, "autograde", "STUDENT=late", "JOBS=1")
    assert "Autograded 1/1 submissions" in again.stdout
    assert "late" in again.stdout and "renamed1" not in again.stdout
    unknown = _make(course, "autograde", "STUDENT=nobody", check=False)
    assert unknown.returncode != 0 and "no submission for nobody" in unknown.stdout + unknown.stderr
    assert "Traceback" not in unknown.stdout + unknown.stderr


def test_feedback_is_readable(instructor_class):
    course, _, _, _ = instructor_class
    html = (course / "grading" / "feedback" / "renamed1" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    for stage in CHAPTER.stages:
        assert f'<h3 class="stage-heading">{stage.label}' in html, stage.label
    assert "<math" in html and "\\frac" not in html and "\\sqrt" not in html  # formulas drawn without MathJax
    assert "white-space: pre-wrap" in html
    assert "Out[" not in html  # no bare score under the test cells
    assert "HIDDEN TESTS" not in html and "hidden_seed" not in html


def test_the_due_date_is_the_utc_instant_typed_and_a_zone_abbreviation_is_refused(instructor_class):
    course, _, _, _ = instructor_class
    refused = _make(course, "duedate", "DUE=20 Nov 2026 23:59 PST", check=False)
    assert refused.returncode != 0 and "nothing stored" in refused.stderr and "Traceback" not in refused.stderr
    refused = _make(course, "duedate", "DUE=2026-11-20 23:59 PST", check=False)
    assert refused.returncode != 0 and "abbreviation" in refused.stderr
    assert f"is due {DUE_STORED}" in _make(course, "duedate", "DUE=2026-11-20 12:00 Europe/London").stdout
    assert f"is due {DUE_STORED}" in _make(course, "duedate", f"DUE={DUE}").stdout


def test_the_late_penalty_is_a_share_of_the_score_not_of_the_bonus(instructor_class):
    if not BONUS_MAX:
        pytest.skip("the course has no bonus stage")
    _, _, grades, _ = instructor_class
    row = grades["latebonus"]
    assert float(row["extra_credit"]) == BONUS_MAX > 0
    # 36 hours late: the rule's share of the total, the bonus kept whole (nbgrader's own rule took a share of both)
    assert (float(row["raw_score"]), float(row["late_submission_penalty"])) == (CHAPTER.max_score + BONUS_MAX, PENALTY)
    assert row["score"] == AFTER_PENALTY


def test_a_pasted_graded_cell_is_graded_with_a_note(instructor_class):
    _, _, grades, _ = instructor_class
    row = grades["pasted"]
    assert _total(row) == CHAPTER.max_score and row["score"] == TOTAL and float(row["extra_credit"]) == BONUS_MAX, row
    assert "is a copy of cell" in row["warnings"] and PASTED in row["warnings"], row["warnings"]


def test_a_failed_regrade_never_leaves_the_earlier_grade_standing(instructor_class):
    course, _, grades, _ = instructor_class
    assert grades["regraded"]["score"] == TOTAL and float(grades["regraded"]["extra_credit"]) == BONUS_MAX
    handed_in = course / "grading" / "submitted" / "regraded" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    # a blank notebook with a pasted (stub) answer cell: graded, 0
    _write(handed_in, _pasted(json.loads(RELEASE.read_text())))
    _make(course, "autograde", "STUDENT=regraded", "JOBS=1")
    row = _export(course)["regraded"]
    assert (row["score"], _total(row)) == ("0", 0) and "is a copy of cell" in row["warnings"], row
    # a notebook nbgrader cannot read: NOT GRADED with nbgrader's reason, never the last grade
    handed_in.write_text('{"cells": [')
    failed = _make(course, "autograde", "STUDENT=regraded", "JOBS=1", check=False)
    assert failed.returncode != 0
    row = _export(course)["regraded"]
    assert row["score"] == "0" and _total(row) == 0 and row["warnings"].startswith("NOT GRADED: "), row
    assert len(row["warnings"]) > len("NOT GRADED: ") + 10, row["warnings"]
