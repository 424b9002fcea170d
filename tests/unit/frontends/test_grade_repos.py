"""Issue 35: make grade-repos's CSV never shows an earlier run's grade as this run's."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends import grade_repos, student_repo


def _row(student: str, total: float) -> grade_repos.Row:
    return grade_repos.Row(student, {grade_repos._stage_column(s): 0.0 for s in CHAPTER.stages}, total=total)


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_a_run_that_stops_leaves_no_earlier_grade_standing(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    earlier = [_row(s, 100.0) for s in ("ann", "bob")]
    grade_repos.write_csv(out / "grades.csv", earlier, CHAPTER)  # the last run: both at 100
    repos = {"ann": tmp_path / "ann", "bob": tmp_path / "bob"}
    monkeypatch.setattr(grade_repos, "student_repos", lambda folder: repos)
    monkeypatch.setattr(student_repo, "release_parts", lambda chapter: {})

    def grade_one(student, repo, out, chapter, expected, deadline=None):
        if student == "bob":
            raise KeyboardInterrupt  # the instructor stops the run (not caught as one repository's trouble)
        return _row(student, 40.0)

    monkeypatch.setattr(grade_repos, "grade_one", grade_one)
    with pytest.raises(KeyboardInterrupt):
        grade_repos.grade_all(tmp_path, out, CHAPTER, jobs=1)
    rows = _rows(out / "grades.csv")
    assert rows["ann"]["total"] == "40" and rows["ann"]["reason"] == ""
    assert rows["bob"]["total"] == "0" and rows["bob"]["reason"] == grade_repos.UNFINISHED
