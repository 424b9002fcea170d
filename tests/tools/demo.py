"""``make demo``: a simulated class through every route, in a scratch folder of its own (any other
folder is refused, never deleted), and each student's expected total beside the actual ones.

    .venv/bin/python tests/tools/demo.py [--dir build/demo] [--jobs 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from simulated_course import (
    ASSIGNMENT,
    MISTAKES,
    REPO,
    SimulatedStudent,
    copy_course,
    nbgrader_env,
    release_and_solution,
    write_submission,
)

from autograder.chapters import load
from autograder.frontends.instructors import class_report, student_repo

DEFAULT_DIR = Path("build") / "demo"
MARKER = ".made-by-make-demo"
DUE = "2026-11-20 12:00:00 UTC"
ON_TIME = "2026-11-20 11:00:00 UTC"
LATE = "2026-11-22 00:00:00 UTC"  # 36 hours late: two days started


class DemoError(Exception):
    """The demo cannot run; nothing was deleted."""


@dataclass(frozen=True)
class DemoStudent:
    """A simulated student and the total they should get (a known mistake costs part of a stage)."""

    student: SimulatedStudent
    what: str
    low: float
    high: float
    late_fraction: float = 0.0


def demo_class() -> list[DemoStudent]:
    chapter = load(ASSIGNMENT)
    graded = frozenset(s.number for s in chapter.stages if not s.bonus)
    mistakes, part = frozenset(MISTAKES), frozenset(sorted(graded)[:4])

    def points(numbers) -> float:
        return sum(chapter.points(chapter.stage(n)) for n in numbers)

    full = points(graded)
    return [
        DemoStudent(SimulatedStudent("full_marks", timestamp=ON_TIME), "every stage and the bonus", full, full),
        DemoStudent(SimulatedStudent("blank", done=frozenset(), timestamp=ON_TIME), "the release, untouched", 0, 0),
        DemoStudent(SimulatedStudent("partly_done", done=part, timestamp=ON_TIME),
                    f"stages {min(part)}-{max(part)} only", points(part), points(part)),
        DemoStudent(SimulatedStudent("mistakes", done=graded, mistake=mistakes, timestamp=ON_TIME),
                    f"a known mistake in stages {', '.join(map(str, sorted(mistakes)))}", points(graded - mistakes), full - 1),
        DemoStudent(SimulatedStudent("renamed", done=graded, notebook_name=f"{ASSIGNMENT} (1).ipynb", timestamp=ON_TIME),
                    f"handed in as '{ASSIGNMENT} (1).ipynb'", full, full),
        DemoStudent(SimulatedStudent("late", done=graded, timestamp=LATE), "36 h late", full, full, late_fraction=0.2),
    ]


@dataclass
class Demo:
    """What the steps share."""

    root: Path
    jobs: int
    students: list[DemoStudent] = field(default_factory=demo_class)
    results: dict[str, Path] = field(default_factory=dict)  # label -> path, printed at the end
    nbgrader_totals: dict[str, dict[str, float]] = field(default_factory=dict)  # student -> raw, penalty, score, extra
    repo_totals: dict[str, float] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.course, self.template, self.repos, self.repo_grades = (
            self.root / name for name in ("course", "student-template", "student-repos", "grade-repos"))


def _run(demo: Demo, args: list[str], as_make: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """A command of the route, printed as the make command it stands for."""
    print(f"  $ {as_make}", flush=True)
    proc = subprocess.run([sys.executable, "-I", "-m", *args], cwd=cwd or demo.course, capture_output=True, text=True,
                          env={**nbgrader_env(), "COLUMNS": "120"})
    demo.log.append(f"$ {as_make}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise DemoError(f"{as_make} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc


def step_release(demo: Demo) -> None:
    copy_course(demo.course)
    _run(demo, ["nbgrader", "generate_assignment", ASSIGNMENT, "--force", "--log-level=WARN"], "make release")


def step_due_date(demo: Demo) -> None:
    _run(demo, ["autograder", "duedate", ASSIGNMENT, DUE], f'make duedate DUE="{DUE}"')


def step_submissions(demo: Demo) -> None:
    release, solution = release_and_solution()
    for entry in demo.students:
        s = entry.student
        write_submission(demo.course, s.id, s.notebook(release, solution), s.notebook_name, s.timestamp)
    print(f"  {len(demo.students)} submissions in {demo.course / 'grading' / 'submitted'}/<student>/{ASSIGNMENT}/")


def step_autograde(demo: Demo) -> None:
    proc = _run(demo, ["autograder", "autograde", ASSIGNMENT, "--jobs", str(demo.jobs)], f"make autograde JOBS={demo.jobs}")
    last = [line for line in proc.stdout.splitlines() if "Autograded" in line]
    if last:
        print(f"  {last[-1].strip()}")


def step_feedback(demo: Demo) -> None:
    _run(demo, ["nbgrader", "generate_feedback", ASSIGNMENT, "--force", "--log-level=WARN"], "make feedback")
    demo.results["feedback (HTML, one page per student)"] = demo.course / "grading" / "feedback"


def step_export(demo: Demo) -> None:
    _run(demo, ["nbgrader", "export", "--to", "grading/grades.csv", "--log-level=WARN"], "make export")
    path = demo.course / "grading" / "grades.csv"
    demo.results["nbgrader's grades (CSV)"] = path
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            extra = float(row["extra_credit"] or 0)
            demo.nbgrader_totals[row["student_id"]] = {
                "raw": float(row["raw_score"]) - extra, "penalty": float(row["late_submission_penalty"] or 0),
                "score": float(row["score"]), "extra": extra}


def step_student_repos(demo: Demo) -> None:
    """The students' repository, one clone per student with the notebook committed at its time."""
    chapter = load(ASSIGNMENT)
    print(f"  $ make student-repo DEST={demo.template}")
    with tempfile.TemporaryDirectory() as scratch:  # built outside the checkout, as make student-repo requires
        student_repo.build(Path(scratch) / "template", chapter)
        shutil.move(Path(scratch) / "template", demo.template)
    release, solution = release_and_solution()
    notebook = chapter.release_notebook(Path())
    submissions = demo.repos / f"{ASSIGNMENT}-submissions"  # one folder down, as cloning a whole class leaves them
    submissions.mkdir(parents=True)
    for entry in demo.students:
        s = entry.student
        clone = submissions / s.id
        subprocess.run(["git", "clone", "-q", str(demo.template), str(clone)], check=True, capture_output=True)
        path = clone / notebook
        if s.notebook_name:  # renamed: the release's name is gone, the student's copy is committed
            path.unlink()
            path = path.with_name(s.notebook_name)
        path.write_text(json.dumps(s.notebook(release, solution), indent=1))
        when = s.timestamp.replace(" UTC", " +0000")
        who = {"NAME": s.id, "EMAIL": f"{s.id}@example.org", "DATE": when}
        env = {**os.environ, **{f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER") for k, v in who.items()}}
        for args in (["add", "--all"], ["commit", "-q", "-m", "my answers"]):
            subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args], cwd=clone,
                           env=env, check=True, capture_output=True)
    print(f"  {len(demo.students)} student repositories in {submissions}/")


def step_grade_repos(demo: Demo) -> None:
    # absolute paths: the grader's processes run in the checkout, which need not be this folder
    _run(demo, ["autograder", "grade-repos", str(demo.repos.resolve()), "--out", str(demo.repo_grades.resolve()),
                "--jobs", str(demo.jobs), "--chapter", ASSIGNMENT],
         f"make grade-repos REPOS={demo.repos} OUT={demo.repo_grades} JOBS={demo.jobs}", cwd=Path.cwd())
    path = demo.repo_grades / "grades.csv"
    demo.results["the repositories' grades (CSV)"] = path
    with open(path, newline="") as handle:
        demo.repo_totals = {row["student"]: float(row["total"]) for row in csv.DictReader(handle)}


def step_class_report(demo: Demo) -> None:
    """The class report from the diagnoses the autograde step left (read, never regraded)."""
    out = demo.root / "class-report"
    print(f"  $ make class-report OUT={out}  (in {demo.course})")
    report = class_report.write_report(class_report.load_nbgrader(demo.course, ASSIGNMENT), out, source="nbgrader")
    for line in class_report.top_mistakes(report):
        print(f"  {line}")
    demo.results["the class mistake report (HTML)"] = out / "index.html"


# The demo, in order: a new instructor report adds its step here.
STEPS: list[tuple[str, Callable[[Demo], None]]] = [
    ("release the assignment", step_release),
    ("set the due date", step_due_date),
    ("collect the submissions", step_submissions),
    ("autograde", step_autograde),
    ("feedback", step_feedback),
    ("export the grades", step_export),
    ("build the students' repositories", step_student_repos),
    ("regrade the repositories", step_grade_repos),
    ("the class mistake report", step_class_report),
]


def refusal(root: Path) -> str | None:
    """Why ``root`` cannot be the demo's folder (None: it can)."""
    resolved = root.resolve()
    for base in {Path.cwd().resolve(), REPO}:
        grading = base / "grading"
        if resolved in (base, grading) or grading in resolved.parents or resolved in base.parents:
            return f"{root} is the course's own folder or its grading/; give a scratch folder such as build/demo"
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        return f"{root} exists and is not a folder; give a new path"
    if root.is_dir() and any(root.iterdir()) and not (root / MARKER).is_file():
        return (f"{root} exists and was not made by make demo (no {MARKER} in it); nothing was deleted: "
                "give a new folder (make demo DEMO_DIR=...) or remove it yourself")
    return None


def prepare(root: Path) -> None:
    why = refusal(root)
    if why:
        raise DemoError(why)
    if (root / MARKER).is_file():
        shutil.rmtree(root)  # the previous demo's own folder
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("made by make demo (tests/tools/demo.py); a re-run replaces this folder\n")


def print_summary(demo: Demo, seconds: float) -> bool:
    """Each student's expected total beside nbgrader's and the regrade's; True when all agree."""
    rows = []
    for entry in demo.students:
        s = entry.student
        got = demo.nbgrader_totals.get(s.id, {})
        raw = got.get("raw")
        expected = f"{entry.low:g}" if entry.low == entry.high else f"{entry.low:g}-{entry.high:g}"
        if entry.late_fraction:
            expected += f", -{entry.late_fraction:.0%} late"
        ok = raw is not None and entry.low <= raw <= entry.high \
            and abs(got.get("penalty", 0) - round(entry.late_fraction * raw, 2)) < 0.01 \
            and demo.repo_totals.get(s.id) == raw
        nbgrader = "-" if raw is None else f"{raw:g}" + (f" -{got['penalty']:g} = {got['score']:g}" if got["penalty"] else "") \
            + (f" +{got['extra']:g} bonus" if got["extra"] else "")
        rows.append({"student": s.id, "what": entry.what, "expected": expected, "nbgrader": nbgrader,
                     "repos": f"{demo.repo_totals[s.id]:g}" if s.id in demo.repo_totals else "-", "ok": "yes" if ok else "NO"})
    total = f"{load(ASSIGNMENT).max_score:g}"  # the course's, which make release may have changed
    heads = {"student": "student", "what": "what they did", "expected": f"expected /{total}",
             "nbgrader": "nbgrader", "repos": "repos", "ok": "as expected"}
    widths = {k: max(len(heads[k]), *(len(r[k]) for r in rows)) for k in heads}
    print(f"\nEach simulated student: the expected total (out of {total}; the late penalty per "
          "nbgrader_config.py's LatePenalty), nbgrader's (raw, -penalty, +bonus) and the repositories' regrade:")
    for row in [heads, *rows]:
        print(("  " + "  ".join(row[k].ljust(widths[k]) for k in heads)).rstrip())
    print(f"\nmake demo: done in {seconds:.0f} s. The results:")
    for label, path in demo.results.items():
        print(f"  {label}: {path}")
    print(f"  the course copy (nbgrader's layout, gradebook): {demo.course}")
    print("Next: docs/instructors/nbgrader.md (your own class) and docs/instructors/github-organizations.md or classroom50.md.")
    return all(r["ok"] == "yes" for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make demo", description="a simulated class through nbgrader and the repositories' regrade")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"the scratch folder (default {DEFAULT_DIR})")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks graded at a time (default 2)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    root, demo = args.dir, Demo(args.dir, max(1, args.jobs))
    try:
        prepare(root)
        print(f"make demo: {len(demo.students)} simulated students in {root}/ (JOBS={demo.jobs})")
        for number, (title, step) in enumerate(STEPS, 1):
            print(f"[{number}/{len(STEPS)}] {title}", flush=True)
            step(demo)
    except DemoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if demo.log and root.is_dir():
            (root / "demo.log").write_text("\n".join(demo.log))
    return 0 if print_summary(demo, time.monotonic() - started) else 1


if __name__ == "__main__":
    sys.exit(main())
