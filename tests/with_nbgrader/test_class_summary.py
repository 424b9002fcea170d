"""make autograde's table: rows read back from a gradebook, problems first, and last_line."""

from __future__ import annotations

import pytest

from autograder.frontends.instructors import autograde as class_summary
from autograder.frontends.instructors.autograde import last_line, running_description, summary_rows


def test_last_line_is_the_reason_without_the_traceback():
    assert last_line("Traceback (most recent call last):\n  File x\nValueError: boom\n\n") == "ValueError: boom"
    assert last_line("   \n") == "unknown error"


def test_running_description_without_running_students():
    assert running_description(12, 3, {}) == "running 12 notebooks, 3 at a time"


def test_summary_rows_put_the_ungraded_first(gradebook_url):
    api = pytest.importorskip("nbgrader.api")
    db_url = gradebook_url
    with api.Gradebook(db_url) as gb:
        gb.add_assignment("a1")
        for student in ("ann", "bob", "cid"):
            gb.add_student(student)
    failed = {"bob": "Traceback\n  ...\nRuntimeError: the worker died"}
    rows = summary_rows(db_url, "a1", ["ann", "bob", "cid"], failed,
                        {"ann": ["[WARNING] a cell changed", "[WARNING] 3.0 hours late, 1 day(s): penalty 10% of 90 = 9"],
                         "cid": ["[WARNING] renamed notebook: graded x.ipynb as a1.ipynb"]})
    assert [r["student"] for r in rows] == ["bob", "ann", "cid"]
    assert rows[0]["problems"] == ["NOT GRADED: RuntimeError: the worker died"]
    assert rows[1]["problems"] == ["a cell changed"]
    assert rows[2]["problems"] == ["renamed notebook: graded x.ipynb as a1.ipynb"]
    assert all(r["score"] == "" for r in rows)  # no submission in the gradebook


def test_progress_names_the_students_still_running(monkeypatch):
    monkeypatch.setattr(class_summary.time, "time", lambda: 1000.0)
    assert class_summary.running_description(10, 2, {}) == "running 10 notebooks, 2 at a time"
    line = class_summary.running_description(10, 2, {"s07_loop": 1000.0 - 431, "s09": 1000.0 - 12})
    assert line == "running s07_loop 7:11, s09 0:12"  # longest first, minutes:seconds


def test_the_summary_ends_with_the_most_common_mistakes_and_the_report():
    from rich.console import Console

    from autograder.frontends.instructors.autograde import Summary, print_summary

    summary = Summary(["a", "b"], 3.0, {}, 2, {}, mistakes=["2 students: Stage 3 (self_attention): not scaled [no_scale]"],
                      report="build/class-report/index.html")
    console = Console(record=True, width=200)
    print_summary(summary, 2, console)
    text = console.export_text()
    assert "Most common mistakes:\n  2 students: Stage 3 (self_attention): not scaled [no_scale]" in text
    assert "Class report: build/class-report/index.html" in text
    assert text.index("Class report") < text.index("Autograded 2/2")


def test_last_line_of_nbgrader_failure_is_the_first_tracebacks_error():
    log = ("[ERROR] There was an error processing assignment: x\n[ERROR] Traceback (most recent call last):\n"
           "  File y\nKeyError: 'grade_id'\n\n[ERROR] Please see the the above traceback for details\n"
           "Traceback (most recent call last):\n  File z\nnbgrader.converters.base.NbGraderException: Please see\n")
    assert last_line(log) == "KeyError: 'grade_id'"
