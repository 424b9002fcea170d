"""make grade-repos: the CSV never shows an earlier run's grade as this run's (issue 35); the
commit graded at a deadline comes from a clock the student does not hold (GitHub's record of
the pushes through a stand-in gh, or make collect-repos), never from the commit's own date."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import fake_gh
import pytest

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends import commands
from autograder.frontends.instructors import deadline, grade_repos, student_repo


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

    def grade_one(student, repo, out, chapter, expected, *at_deadline):
        if student == "bob":
            raise KeyboardInterrupt  # the instructor stops the run (not caught as one repository's trouble)
        return _row(student, 40.0)

    monkeypatch.setattr(grade_repos, "grade_one", grade_one)
    with pytest.raises(KeyboardInterrupt):
        grade_repos.grade_all(tmp_path, out, CHAPTER, jobs=1)
    rows = _rows(out / "grades.csv")
    assert rows["ann"]["total"] == "40" and rows["ann"]["reason"] == ""
    assert rows["bob"]["total"] == "0" and rows["bob"]["reason"] == grade_repos.UNFINISHED


# --- the commit at the deadline -----------------------------------------------------------------

DEADLINE = datetime(2026, 11, 21, 4, 59, tzinfo=timezone.utc)  # 2026-11-20 23:59 in New York


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
           "GIT_COMMITTER_EMAIL": "s@x", **({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {})}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout.strip()


def _commit(repo: Path, text: str, date: str) -> str:
    """A commit whose committer date is ``date``: the student's machine sets it (GIT_COMMITTER_DATE)."""
    (repo / "work.txt").write_text(text)
    _git(repo, "add", "work.txt")
    _git(repo, "commit", "-qm", text, date=date)
    return _git(repo, "rev-parse", "HEAD")


def _student(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / "repos" / name
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", f"git@github.com:course/{name}.git")
    return repo


@pytest.fixture
def gh(tmp_path, monkeypatch):
    """install(record): the stand-in gh first on PATH, answering from ``record``."""
    def install(record, logged_in=True):
        env = fake_gh.install(tmp_path / "bin", record, logged_in)
        for name in ("PATH", "FAKE_GH_RECORD", "FAKE_GH_LOGGED_OUT"):
            monkeypatch.setenv(name, env[name])
        return env
    return install


def test_a_back_dated_commit_pushed_late_is_not_graded_as_on_time(tmp_path, gh):
    repo = _student(tmp_path, "ann")
    on_time = _commit(repo, "stage 1", "2026-11-20T20:00:00-05:00")
    late = _commit(repo, "everything", "2026-11-20T23:00:00-05:00")  # dated before the deadline...
    record = {"course/ann": [fake_gh.push("0" * 40, on_time, "2026-11-21T01:00:05Z"),
                             fake_gh.push(on_time, late, "2026-11-21T08:10:00Z")]}  # ...pushed after it
    env = gh(record)
    pick = deadline.pushed_commit(repo, DEADLINE)
    assert deadline.choose_commit("ann", repo, DEADLINE, None, True).commit == late, "the commit's own date would have graded the late work"
    assert pick.commit == on_time and not pick.refusal
    assert pick.note == (f"pushed 2026-11-21 01:00:05 UTC (GitHub's record); pushed 2026-11-21 08:10:00 UTC, after the "
                         f"deadline: {late[:10]}, whose committer date says 2026-11-21 04:00:00 UTC, not graded")
    assert fake_gh.calls(env) == [["api", "--paginate", "repos/course/ann/activity?ref=refs%2Fheads%2Fmain&per_page=100"]]


def test_every_page_of_the_record_is_read(tmp_path, gh):
    """Newest first, 100 to a page: the last push before the deadline is on the second page."""
    repo = _student(tmp_path, "bob")
    first = _commit(repo, "first", "2026-11-19T10:00:00Z")
    second = _commit(repo, "second", "2026-11-20T10:00:00Z")
    later = [fake_gh.push(second, second, f"2026-11-22T{h % 24:02d}:{h // 24:02d}:00Z") for h in range(120)]
    gh({"course/bob": [fake_gh.push("0" * 40, first, "2026-11-19T10:00:01Z"),
                       fake_gh.push(first, second, "2026-11-20T10:00:01Z"), *later]})
    pick = deadline.pushed_commit(repo, DEADLINE)
    assert pick.commit == second and pick.note.startswith("pushed 2026-11-20 10:00:01 UTC (GitHub's record); pushed 2026-11-22")


def test_what_the_record_cannot_give_is_refused_with_the_reason(tmp_path, gh):
    repos = {name: _student(tmp_path, name) for name in ("early", "unfetched", "deleted", "unknown", "elsewhere")}
    tip = {name: _commit(repo, name, "2026-11-19T10:00:00Z") for name, repo in repos.items()}
    _git(repos["elsewhere"], "remote", "set-url", "origin", "https://gitlab.com/course/elsewhere.git")
    gh({"course/early": [fake_gh.push("0" * 40, tip["early"], "2026-11-21T05:00:00Z")],
        "course/unfetched": [fake_gh.push(tip["unfetched"], "b" * 40, "2026-11-21T04:00:00Z")],
        "course/deleted": [fake_gh.push("0" * 40, tip["deleted"], "2026-11-19T10:00:01Z"),
                           fake_gh.push(tip["deleted"], "0" * 40, "2026-11-20T10:00:00Z", kind="branch_deletion")]})
    said = {name: deadline.pushed_commit(repo, DEADLINE) for name, repo in repos.items()}
    assert not any(p.commit for p in said.values())
    assert said["early"].refusal == (f"no push at or before the deadline (2026-11-21 04:59:00 UTC); pushed 2026-11-21 "
                                     f"05:00:00 UTC, after the deadline: {tip['early'][:10]}, whose committer date says "
                                     f"2026-11-19 10:00:00 UTC, not graded")
    assert said["unfetched"].refusal == (f"bbbbbbbbbbbb (pushed 2026-11-21 04:00:00 UTC (GitHub's record)) is not in this "
                                         f"clone; fetch first (git -C {repos['unfetched']} fetch)")
    assert said["deleted"].refusal == "the branch was deleted 2026-11-20 10:00:00 UTC, before the deadline"
    assert said["unknown"].refusal.startswith("no push record: gh api repos/course/unknown/activity?")
    assert "gh: Not Found (HTTP 404)" in said["unknown"].refusal and "gh auth login" in said["unknown"].refusal
    assert said["elsewhere"].refusal.startswith("no push record: origin is not a github.com repository")


def test_without_a_trusted_record_a_deadline_is_refused_before_anything_is_written(tmp_path, gh, monkeypatch, capsys):
    repo = _student(tmp_path, "ann")
    _commit(repo, "work", "2026-11-19T10:00:00Z")
    out = tmp_path / "out"
    args = [str(repo.parent), "--out", str(out), "--deadline", "2026-11-20 23:59 America/New_York"]
    gh({}, logged_in=False)
    assert commands.main(["grade-repos", *args]) == 2
    said = capsys.readouterr().err
    assert "gh is not logged in to github.com (You are not logged into any GitHub hosts" in said
    assert "gh auth login" in said and "make collect-repos" in said and "TRUST_COMMIT_DATES=1" in said
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no gh at all
    assert commands.main(["grade-repos", *args]) == 2
    assert "the GitHub CLI (gh) did not run" in capsys.readouterr().err
    assert not out.exists()


def test_trusting_the_commit_dates_is_said_on_the_row(tmp_path):
    repo = _student(tmp_path, "ann")
    dated = _commit(repo, "work", "2026-11-20T10:00:00Z")
    pick = deadline.choose_commit("ann", repo, DEADLINE, None, trust=True)
    assert (pick.commit, pick.note) == (dated, deadline.TRUSTED_DATES)
    assert "TRUST_COMMIT_DATES=1" in pick.note and "student" in pick.note
    early = deadline.choose_commit("ann", repo, datetime(2026, 11, 1, tzinfo=timezone.utc), None, trust=True)
    assert not early.commit and "TRUST_COMMIT_DATES=1" in early.refusal


def test_the_collection_records_the_tips_by_the_instructors_clock(tmp_path, capsys):
    """make collect-repos at the deadline: each origin's tip, read with git ls-remote (the clone is
    not written); a push after it, fetched later, is not what grade-repos then grades."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    repo = tmp_path / "repos" / "ann"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True, capture_output=True)
    at_deadline = _commit(repo, "on time", "2026-11-20T10:00:00Z")
    _git(repo, "push", "-q", "origin", "main")
    before = _git(repo, "for-each-ref")
    collected = tmp_path / "collected.json"
    started = datetime.now(timezone.utc).replace(microsecond=0)
    assert commands.main(["grade-repos", str(repo.parent), "--collect", str(collected)]) == 0
    assert _git(repo, "for-each-ref") == before, "the clone was written"
    entry = json.loads(collected.read_text())["ann"]
    assert entry["commit"] == at_deadline and entry["branch"] == "main"
    assert started <= datetime.fromisoformat(entry["collected"]) <= datetime.now(timezone.utc)
    late = _commit(repo, "late", "2026-11-20T11:00:00Z")  # back-dated, pushed after the collection
    _git(repo, "push", "-q", "origin", "main")
    pick = deadline.choose_commit("ann", repo, None, json.loads(collected.read_text()), trust=False)
    assert pick.commit == at_deadline != late and "by the instructor's clock" in pick.note
    assert deadline.choose_commit("bob", repo, None, {}, trust=False).refusal == "not collected: not in the collection"
    collected.write_text("keep")
    assert commands.main(["grade-repos", str(repo.parent), "--collect", str(collected)]) == 2
    assert "exists" in capsys.readouterr().err and collected.read_text() == "keep"
