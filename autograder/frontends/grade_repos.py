"""``make grade-repos REPOS=dir``: the trusted regrade of a class's repositories.

    python -m autograder.frontends.grade_repos REPOS [--out build/grade-repos] [--jobs N]

REPOS holds one folder per student repository, cloned at the deadline (for instance with
``gh classroom clone student-repos``). From each one only the notebook is read: it is copied
out and graded by *this* checkout's grader (the instructor's), never by the copy of the grader
in the student's repository, JOBS at a time with a progress bar. The student's grader files are
only compared with the release (the fingerprint of :mod:`autograder.frontends.fingerprint`),
to report an edit. Nothing in REPOS is written.

Writes, under ``--out``:

- ``grades.csv``: one row per repository: ``student``, one column per stage, ``total`` (out of
  100; the bonus stage has its own column and is not in it), ``commit`` (the checked-out
  commit), ``fingerprint`` (``release`` or ``modified: <parts>``) and ``reason`` (why a row is
  0: no notebook, a damaged one, a grading that did not finish);
- ``<student>/report.txt`` (the grader's table, as ``make test`` prints it) and
  ``<student>/results.json`` (Gradescope's schema).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from autograder.frontends import finder, fingerprint
from autograder.frontends.jobs import default_jobs

REPO_ROOT = Path(__file__).resolve().parents[2]  # the instructor's checkout: its grader grades
DEFAULT_OUT = Path("build") / "grade-repos"
GRADING_SECONDS = 900  # one notebook, every stage; the grader's own limits stop it well before


@dataclass
class Row:
    student: str
    stage_points: dict[str, float] = field(default_factory=dict)
    total: float = 0.0
    commit: str = ""
    fingerprint: str = ""
    reason: str = ""
    seconds: float = 0.0


def columns(chapter) -> list[str]:
    stages = [f"stage{s.number}_{s.id}" for s in chapter.stages if not s.bonus]
    bonus = [f"bonus_stage{s.number}_{s.id}" for s in chapter.stages if s.bonus]
    return ["student", *stages, "total", *bonus, "commit", "fingerprint", "reason"]


def _stage_column(stage) -> str:
    return f"{'bonus_' if stage.bonus else ''}stage{stage.number}_{stage.id}"


def find_notebook(repo: Path, chapter) -> tuple[Path | None, str]:
    """The notebook to grade in ``repo`` and a note (:func:`autograder.frontends.finder.find_notebook`):
    the release's path, else the shallowest notebook of that name, else the shallowest
    notebook. A link is never followed: it could point at anything on the instructor's
    machine (the solutions, say)."""
    expected = chapter.release_notebook(repo).relative_to(repo)
    found = finder.find_notebook(repo, chapter.id, below=True, expected=expected, several="shallowest", links="refuse")
    if found.problem == "none":
        return None, f"no notebook (.ipynb) in the repository; expected {expected.as_posix()}"
    if found.notebook is None:
        return None, found.reason
    relative = found.notebook.relative_to(repo)
    note = "" if relative == expected else f"graded {relative.as_posix()} (not at {expected.as_posix()})"
    return found.notebook, note


def head_commit(repo: Path) -> str:
    """The checked-out commit, read without writing to the repository ('' when there is none)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        proc = subprocess.run(["git", "-c", f"safe.directory={repo}", "-C", str(repo), "rev-parse", "--verify", "-q", "HEAD"],
                              capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def fingerprint_status(repo: Path, chapter, release_parts: dict[str, str]) -> str:
    notebook = chapter.release_notebook(Path()).as_posix()
    parts = fingerprint.parts_of(fingerprint.read_tree(repo, notebook), notebook)
    verdict = fingerprint.compare(parts, release_parts)
    if verdict.status == "release":
        return "release"
    shown = "; ".join(verdict.changed[:6])
    return f"modified: {shown}" + (f" and {len(verdict.changed) - 6} more" if len(verdict.changed) > 6 else "")


def grade_one(repo: Path, out: Path, chapter, release_parts: dict[str, str]) -> Row:
    started = time.monotonic()
    row = Row(repo.name, {_stage_column(s): 0.0 for s in chapter.stages})
    row.commit = head_commit(repo)
    row.fingerprint = fingerprint_status(repo, chapter, release_parts)
    folder = out / repo.name
    folder.mkdir(parents=True, exist_ok=True)
    notebook, note = find_notebook(repo, chapter)
    if notebook is None:
        row.reason = note
        (folder / "report.txt").write_text(f"{repo.name}: 0 points: {note}\n", encoding="utf-8")
        row.seconds = time.monotonic() - started
        return row
    # A private copy is graded: the student's repository is only read.
    copy = folder / "submission" / notebook.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, copy, follow_symlinks=False)
    results = folder / "results.json"
    if results.exists():
        results.unlink()  # our own file from an earlier run (the folder is ours: see _refusal)
    env = {**os.environ, "COLUMNS": "140", "NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-I", "-m", "autograder", str(copy), "--results", str(results), "--device", "cpu",
               "--chapter", chapter.id]
    try:
        proc = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=GRADING_SECONDS)
        log = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        log = f"{exc.stdout or ''}{exc.stderr or ''}"
        row.reason = f"grading did not finish in {GRADING_SECONDS} s"
    (folder / "report.txt").write_text(log if isinstance(log, str) else log.decode("utf-8", "replace"), encoding="utf-8")
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        row.reason = row.reason or "the grader wrote no results"
        row.seconds = time.monotonic() - started
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
    row.reason = row.reason or note
    row.seconds = time.monotonic() - started
    return row


def student_repos(repos: Path) -> list[Path]:
    return sorted(p for p in repos.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))


def _refusal(repos: Path, out: Path) -> str | None:
    if not repos.is_dir():
        return f"{repos}: no such folder (REPOS= the folder of cloned student repositories)"
    if out.resolve() == repos.resolve() or repos.resolve() in out.resolve().parents:
        return f"--out {out} is inside {repos}; nothing may be written there"
    csv_path = out / "grades.csv"
    if out.exists() and not out.is_dir():
        return f"--out {out} is a file; give a folder"
    if out.is_dir() and any(out.iterdir()):
        try:
            ours = csv_path.read_text(encoding="utf-8").startswith("student,")
        except OSError:
            ours = False
        if not ours:
            return f"--out {out} holds files this command did not write; give a new folder"
    return None


def write_csv(path: Path, rows: list[Row], chapter) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns(chapter))
    for row in rows:
        points = [f"{row.stage_points[_stage_column(s)]:g}" for s in chapter.stages if not s.bonus]
        bonus = [f"{row.stage_points[_stage_column(s)]:g}" for s in chapter.stages if s.bonus]
        writer.writerow([row.student, *points, f"{row.total:g}", *bonus, row.commit, row.fingerprint, row.reason])
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(buffer.getvalue(), encoding="utf-8")
    tmp.replace(path)


def grade_all(repos: Path, out: Path, chapter, jobs: int) -> list[Row]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from autograder.frontends.student_repo import release_parts

    expected = release_parts(chapter)
    students = student_repos(repos)
    rows: list[Row] = []
    with Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}")) as progress, ThreadPoolExecutor(max_workers=jobs) as pool:
        task = progress.add_task("", total=len(students))
        futures = {pool.submit(grade_one, repo, out, chapter, expected): repo for repo in students}
        for future in as_completed(futures):
            repo = futures[future]
            try:
                rows.append(future.result())
            except Exception as exc:  # one repository's trouble never stops the class
                rows.append(Row(repo.name, {_stage_column(s): 0.0 for s in chapter.stages},
                                reason=f"not graded: {type(exc).__name__}: {exc}"))
            progress.update(task, advance=1, description=repo.name)
    return sorted(rows, key=lambda r: r.student)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.frontends.grade_repos",
                                     description="Regrade cloned student repositories with this checkout's grader.")
    parser.add_argument("repos", type=Path, help="the folder holding one folder per student repository")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the CSV and reports go (default {DEFAULT_OUT})")
    parser.add_argument("--jobs", type=int, default=None, help="repositories graded at a time (default: CPU cores)")
    parser.add_argument("--chapter", default=None, metavar="ID")
    args = parser.parse_args(argv)
    from autograder.chapters import load

    try:
        chapter = load(args.chapter)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    why = _refusal(args.repos, args.out)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    if not student_repos(args.repos):
        print(f"error: {args.repos} holds no repository folders", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # absolute: the grader runs in this checkout (cwd=REPO_ROOT), not necessarily the current folder
    rows = grade_all(args.repos.resolve(), args.out.resolve(), chapter, max(1, args.jobs or default_jobs()))
    write_csv(args.out / "grades.csv", rows, chapter)
    for row in rows:
        flags = "" if row.fingerprint == "release" else f"  [{row.fingerprint.split(':')[0]}]"
        print(f"{row.student}: {row.total:g}/{chapter.max_score:g}{flags}{'  ' + row.reason if row.reason else ''}")
    print(f"{len(rows)} repositories in {time.monotonic() - started:.1f} s: {args.out / 'grades.csv'}, "
          f"reports in {args.out}/<student>/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
