"""autograder.frontends.classgrade's progress line (grading a class is
tests/e2e/test_instructor_class.py)."""

from __future__ import annotations

from autograder.frontends import classgrade


def test_progress_names_the_students_still_running(monkeypatch):
    monkeypatch.setattr(classgrade.time, "time", lambda: 1000.0)
    assert classgrade.running_description(10, 2, {}) == "running 10 notebooks, 2 at a time"
    line = classgrade.running_description(10, 2, {"s07_loop": 1000.0 - 431, "s09": 1000.0 - 12})
    assert line == "running s07_loop 7:11, s09 0:12"  # longest first, minutes:seconds
