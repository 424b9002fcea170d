"""``make grade-repos``: the trusted regrade of a class's repositories. Only each notebook is read,
and graded by this checkout's grader; nothing in REPOS is written, and grades.csv is rewritten as
each repository ends, so a stopped run leaves no earlier grade standing."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from autograder import CHECKOUT
from autograder.frontends import finder, fingerprint
from autograder.frontends.commands import Refused, default_jobs, load_chapter
from autograder.frontends.instructors.deadline import (
    HOW_TO_TRUST,
    TRUSTED_DATES,
    InstantError,
    Pick,
    _git,
    choose_commit,
    collect,
    commit_date,
    describe,
    git_output,
    parse_instant,
    server_refusal,
)
from autograder.frontends.reports.safe_write import read_json, write_atomic, write_files

DEFAULT_OUT = Path("build") / "grade-repos"
GRADING_SECONDS = 900  # one notebook, every stage; the grader's own limits stop it well before


@dataclass
class Row:
    student: str
    stage_points: Counter[str] = field(default_factory=Counter)  # a stage not graded: 0
    total: float = 0.0
    commit: str = ""
    commit_date: str = ""
    fingerprint: str = ""
    reason: str = ""


def _stage_column(stage) -> str:
    return f"{'bonus_' if stage.bonus else ''}stage{stage.number}_{stage.id}"


def _folders(parent: Path) -> list[Path]:
    return sorted(p for p in parent.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))


def student_repos(repos: Path) -> dict[str, Path]:
    """Each repository by its row's name; a folder of repositories (one per section) is opened one level down."""
    found: list[Path] = []
    for folder in _folders(repos):
        inside = _folders(folder)
        found += inside if not (folder / ".git").exists() and any((p / ".git").exists() for p in inside) else [folder]
    counts = Counter(repo.name for repo in found)
    return {(repo.name if counts[repo.name] == 1 else repo.relative_to(repos).as_posix()): repo for repo in found}


def export_commit(repo: Path, commit: str, into: Path) -> None:
    """The commit's regular files written under ``into`` (``git archive``: the repository is only read)."""
    proc = _git(repo, "archive", "--format=tar", commit, text=False)
    if proc is None or proc.returncode != 0:
        raise OSError(f"git archive {commit[:12]} failed: {(proc.stderr if proc else b'').decode(errors='replace')[:200]}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as archive:
        write_files(into, {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()
                           and Path(m.name).parts and not Path(m.name).is_absolute() and ".." not in Path(m.name).parts})


def grade_one(student: str, repo: Path, out: Path, chapter, release_parts: dict[str, str],
              deadline: datetime | None = None, collected: dict | None = None, trust: bool = False) -> Row:
    """One repository, at the checked-out files or at the commit :func:`choose_commit` picks."""
    at_head = deadline is None and collected is None
    pick = Pick(git_output(repo, "rev-parse", "--verify", "-q", "HEAD") or "") if at_head else \
        choose_commit(student, repo, deadline, collected, trust)
    row = Row(student, commit=pick.commit)
    folder = out / student
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grade-repos-") as scratch:
        tree, notebook, note = repo, None, pick.refusal
        if pick.commit and not at_head:
            tree = Path(scratch) / "tree"
            export_commit(repo, row.commit, tree)
        if pick.commit or at_head:
            row.commit_date = commit_date(repo, row.commit)
            notebook, note = finder.find_in_repository(tree, chapter)
            # the student's grader against the release
            released = chapter.release_notebook(Path()).as_posix()
            parts = fingerprint.parts_of(fingerprint.read_tree(tree, released, notebook), released)
            verdict = fingerprint.compare(parts, release_parts, notebook_found=notebook is not None)
            row.fingerprint = verdict.status if verdict.status == "release" else verdict.words.removeprefix("grader ")
        if notebook is None:
            row.reason = "; ".join(p for p in (note, pick.note) if p)
            (folder / "report.txt").write_text(f"{student}: 0 points: {row.reason}\n", encoding="utf-8")
            return row
        # a private copy is graded: the student's repository is only read
        copy = folder / "submission" / notebook.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebook, copy, follow_symlinks=False)
    results = folder / "results.json"
    results.unlink(missing_ok=True)  # our own file from an earlier run (the folder is ours: see _refuse_out)
    env = {**os.environ, "COLUMNS": "140", "NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": str(CHECKOUT)}
    command = [sys.executable, "-I", "-m", "autograder", str(copy), "--results", str(results), "--device", "cpu",
               "--chapter", chapter.id]
    try:
        proc = subprocess.run(command, cwd=CHECKOUT, env=env, capture_output=True, text=True, timeout=GRADING_SECONDS)
        log = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        log = "".join(p.decode("utf-8", "replace") if isinstance(p, bytes) else p for p in (exc.stdout, exc.stderr) if p)
        row.reason = f"grading did not finish in {GRADING_SECONDS} s"
    (folder / "report.txt").write_text(log, encoding="utf-8")
    data = read_json(results)
    if not isinstance(data, dict):
        row.reason = row.reason or "the grader wrote no results"
        return row
    by_number = {s.number: s for s in chapter.stages}
    for test in data.get("tests", []):
        stage = by_number.get(int(str(test.get("number", "0")).split(".")[0] or 0))
        if stage is not None:
            row.stage_points[_stage_column(stage)] += float(test.get("score", 0))
    row.total = float(data.get("score", 0))
    output = str(data.get("output", ""))
    if output.startswith("Could not grade"):
        row.reason = row.reason or output.splitlines()[0]
    row.reason = "; ".join(p for p in (row.reason or note, pick.note) if p)
    return row


def _refuse_out(repos: Path, out: Path) -> None:
    if out.resolve() == repos.resolve() or repos.resolve() in out.resolve().parents:
        raise Refused(f"--out {out} is inside {repos}; nothing may be written there")
    if out.exists() and not out.is_dir():
        raise Refused(f"--out {out} is a file; give a folder")
    if out.is_dir() and any(out.iterdir()):
        try:
            ours = (out / "grades.csv").read_text(encoding="utf-8").startswith("student,")
        except OSError:
            ours = False
        if not ours:
            raise Refused(f"--out {out} holds files this command did not write; give a new folder")


def write_csv(path: Path, rows: list[Row], chapter) -> None:
    graded = [_stage_column(s) for s in chapter.stages if not s.bonus]
    bonus = [_stage_column(s) for s in chapter.stages if s.bonus]
    lines = [[row.student, *(f"{row.stage_points[c]:g}" for c in graded), f"{row.total:g}",
              *(f"{row.stage_points[c]:g}" for c in bonus), row.commit, row.commit_date, row.fingerprint, row.reason]
             for row in rows]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [["student", *graded, "total", *bonus, "commit", "commit_date", "fingerprint", "reason"], *lines])
    write_atomic(path, buffer.getvalue())


UNFINISHED = "not graded: the run stopped before this repository was graded"


def grade_all(repos: Path, out: Path, chapter, jobs: int, deadline: datetime | None = None,
              collected: dict | None = None, trust: bool = False) -> list[Row]:
    """Every repository graded; ``grades.csv`` rewritten as each ends, the rest :data:`UNFINISHED`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from autograder.frontends.instructors.student_repo import release_parts

    expected = release_parts(chapter)
    students = student_repos(repos)
    rows: list[Row] = []

    def record() -> None:
        done = {row.student for row in rows}
        pending = [Row(s, reason=UNFINISHED) for s in students if s not in done]
        write_csv(out / "grades.csv", sorted(rows + pending, key=lambda r: r.student), chapter)

    record()
    with Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}")) as progress, ThreadPoolExecutor(max_workers=jobs) as pool:
        task = progress.add_task("", total=len(students))
        futures = {pool.submit(grade_one, student, repo, out, chapter, expected, deadline, collected, trust): student
                   for student, repo in students.items()}
        for future in as_completed(futures):
            student = futures[future]
            try:
                rows.append(future.result())
            except Exception as exc:  # one repository's trouble never stops the class
                rows.append(Row(student, reason=f"not graded: {type(exc).__name__}: {exc}"))
            record()
            progress.update(task, advance=1, description=student)
    return sorted(rows, key=lambda r: r.student)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repos", type=Path, help="the class folder: student repositories inside it or one folder down")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the CSV and reports go (default {DEFAULT_OUT})")
    parser.add_argument("--jobs", type=int, default=None, help="repositories graded at a time (default: CPU cores)")
    parser.add_argument("--chapter", default=None, metavar="ID")
    parser.add_argument("--deadline", default=None, metavar="WHEN", help='each repository at its last push at or before WHEN '
                        'by GitHub\'s record ("2026-11-20 23:59 America/New_York", "2026-11-20 23:59:00 -0500", "2026-11-21T04:59Z")')
    parser.add_argument("--collect", type=Path, metavar="FILE", help="at the deadline: record each origin's tip now in FILE")
    parser.add_argument("--collected", type=Path, metavar="FILE", help="each repository at the tip recorded in FILE")
    parser.add_argument("--trust-commit-dates", action="store_true", help="--deadline by the commit dates the students set")


def run(args: argparse.Namespace) -> int:
    if not args.repos.is_dir():
        raise Refused(f"{args.repos}: no such folder (REPOS= the folder of cloned student repositories)")
    students = student_repos(args.repos)
    if not students:
        raise Refused(f"{args.repos} holds no repository folders")
    if args.collect is not None:
        return collect(args.repos, students, args.collect)
    try:
        deadline = parse_instant(args.deadline) if args.deadline else None
    except InstantError as exc:
        raise Refused(f"DEADLINE {exc}") from None
    chapter = load_chapter(args.chapter)
    _refuse_out(args.repos, args.out)
    collected = None
    if args.collected is not None:
        try:
            collected = json.loads(args.collected.read_text(encoding="utf-8"))
            if not isinstance(collected, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            raise Refused(f"COLLECTED {args.collected} is not a file make collect-repos wrote ({exc})") from None
        print(f"each repository at the tip recorded in {args.collected} (make collect-repos)")
    elif deadline is not None:
        if not args.trust_commit_dates and (why := server_refusal()):
            raise Refused(f"DEADLINE needs a record of when each repository was pushed, which a student cannot set, and "
                          f"{why}. To get one: {HOW_TO_TRUST}.")
        how = f"commit dated at or before it, {TRUSTED_DATES}" if args.trust_commit_dates else \
            "push at or before it, by GitHub's record (gh api)"
        print(f"deadline {describe(deadline)}: each repository's last {how}")
    started = time.monotonic()
    # absolute: the grader runs in this checkout (cwd=CHECKOUT), not necessarily the current folder
    rows = grade_all(args.repos.resolve(), args.out.resolve(), chapter, max(1, args.jobs or default_jobs()), deadline,
                     collected, args.trust_commit_dates)
    for row in rows:
        flags = "  [grader modified]" if row.fingerprint.startswith("modified") else ""
        when = f"  {row.commit[:10]} {row.commit_date}" if (deadline or collected) is not None and row.commit else ""
        print(f"{row.student}: {row.total:g}/{chapter.max_score:g}{when}{flags}{'  ' + row.reason if row.reason else ''}")
    print(f"{len(rows)} repositories in {time.monotonic() - started:.1f} s: {args.out / 'grades.csv'}, "
          f"reports in {args.out}/<student>/")
    return 0

