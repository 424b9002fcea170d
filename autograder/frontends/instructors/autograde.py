"""``make autograde``: nbgrader autograde for a whole class, JOBS at a time. Workers run the sandboxed
runs; then nbgrader's Autograde runs once over the class and takes each run computed for the very
same cells, so every gradebook row is written by nbgrader's own code, as in a serial run."""

from __future__ import annotations

import argparse
import glob
import io
import logging
import os
import re
import shutil
import tempfile
import time
import traceback
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from autograder.chapters import DEFAULT
from autograder.frontends.commands import default_jobs


@dataclass
class Summary:
    students: list[str]
    seconds: float
    failed: dict[str, str]
    replayed: int
    warnings: dict[str, list[str]]  # student -> nbgrader's warnings and errors, and a renamed notebook's note
    rows: list[dict] = field(default_factory=list)  # the summary table, read back from the gradebook
    mistakes: list[str] = field(default_factory=list)  # the class's three most common mistakes (class report)
    report: str = ""  # the class report's path (make class-report), or why it was not written


def running_description(total: int, jobs: int, running: dict[str, float]) -> str:
    """The students whose notebook is running now, longest first, with how long."""
    if not running:
        return f"running {total} notebooks, {jobs} at a time"
    now = time.time()
    longest = sorted(running.items(), key=lambda item: item[1])
    named = ", ".join(f"{student} {int(now - since) // 60}:{int(now - since) % 60:02d}" for student, since in longest[:4])
    return f"running {named}" + (f" (+{len(longest) - 4})" if len(longest) > 4 else "")


# nbgrader's and LatePenalty's lines about lateness: the table's "late (penalty)" column says it.
LATE_NOTICE = re.compile(r"seconds late$|Late submission penalty|hours late, \d+ day")
# --force removes the previous autograded copy of every submission: expected, not news.
REMOVING = re.compile(r"Removing existing (assignment|notebook)")


def summary_rows(db_url: str, assignment: str, students: list[str], failed: dict[str, str],
                 warnings: dict[str, list[str]]) -> list[dict]:
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(db_url) as gb:
        submissions = {submission.student_id: submission for submission in gb.find_assignment(assignment).submissions}
        for student in students:
            problems = ["NOT GRADED: " + last_line(failed[student])] if student in failed else []
            problems += sorted({line.split("[WARNING] ", 1)[1] for line in warnings.get(student, [])
                                if "[WARNING] " in line and not LATE_NOTICE.search(line)})
            row = {"student": student, "score": "", "extra": "", "late": "", "problems": problems}
            submission = submissions.get(student)
            if submission is not None and student not in failed:
                extra = sum(g.extra_credit or 0.0 for nb in submission.notebooks for g in nb.grades)
                penalty = submission.late_submission_penalty or 0.0
                # out of the maximum (100): the bonus is its own column
                row.update(score=f"{max(0.0, submission.score - extra - penalty):g}/{submission.max_score:g}",
                           extra=f"+{extra:g}" if extra else "")
                if submission.total_seconds_late:
                    row["late"] = f"{submission.total_seconds_late / 3600:.1f} h, -{penalty:g}"
            rows.append(row)
    return sorted(rows, key=lambda r: (not any(p.startswith("NOT GRADED") for p in r["problems"]),
                                       not (r["problems"] or r["late"]), r["student"]))


def last_line(error: str) -> str:
    """A failure's reason: the first traceback's error (nbgrader's own generic one comes later),
    else the last line."""
    lines = [line for line in error.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line), len(lines))
    # a traceback's frames are indented; its first line that is not is the error
    raised = next((line for line in lines[start + 1:] if not line[0].isspace()), None)
    return (raised or (lines[-1] if lines else "unknown error")).strip()


def print_summary(summary: Summary, jobs: int, console, verbose: bool = False) -> None:
    from rich.table import Table

    for student, lines in sorted(summary.warnings.items()) if verbose else []:  # else in the problems column
        for line in lines:
            console.print(f"{student}: {line}", markup=False, style="yellow")
    for student, error in summary.failed.items():
        shown = error.strip() if verbose or len(error.strip().splitlines()) <= 1 else last_line(error) + "  (V=1: the whole error)"
        console.print(f"{student}: not autograded: {shown}", markup=False, style="red")
    table = Table(title="make autograde: one row per student, problems first", title_justify="left")
    for column in ("student", "score", "extra credit", "late (penalty)", "problems"):
        table.add_column(column, overflow="fold")
    for row in summary.rows:
        table.add_row(row["student"], row["score"] or "-", row["extra"], row["late"],
                      "; ".join(row["problems"]) or ("late" if row["late"] else "ok"),
                      style="red" if any(p.startswith("NOT GRADED") for p in row["problems"]) else None)
    console.print(table)  # a row per student: never empty (no submission at all is refused before)
    graded = len(summary.students) - len(summary.failed)
    how = f"JOBS={jobs}" + (f", {graded - summary.replayed} executed serially"
                            if jobs > 1 and summary.replayed < graded else "")
    console.print("Most common mistakes:" + ("" if summary.mistakes else " none named"), markup=False)
    for line in summary.mistakes:
        console.print(f"  {line}", markup=False)
    console.print(f"Class report: {summary.report}", markup=False)
    console.print(f"Autograded {graded}/{len(summary.students)} submissions in {summary.seconds:.0f} s ({how}). "
                  "Scores: make export; feedback: make feedback.")


def _app(assignment: str, *flags: str):
    """nbgrader's autograde app, configured as ``nbgrader autograde`` is, not started."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    app = AutogradeApp()
    app.initialize([assignment, "--force", *flags])
    app.coursedir.assignment_id = assignment
    return app


def _through_sandbox(app) -> list:
    """The configured preprocessors up to the sandboxed run (what the workers run)."""
    from nbgrader.converters import Autograde

    from autograder.frontends.instructors.nbgrader.execute import SandboxExecute

    steps = list(Autograde(coursedir=app.coursedir, parent=app).autograde_preprocessors)
    if SandboxExecute not in steps:
        raise SystemExit("nbgrader_config.py does not run SandboxExecute in place of Execute: make autograde "
                         "grades only in the sandbox (see the repository's nbgrader_config.py)")
    return steps[:steps.index(SandboxExecute) + 1]


def _run_converter(app, student: str) -> tuple[bool, str]:
    """nbgrader's Autograde for one student: whether it succeeded, and its warnings and errors."""
    from nbgrader.converters import Autograde

    app.coursedir.student_id = student
    converter = Autograde(coursedir=app.coursedir, parent=app)
    notes = logging.StreamHandler(io.StringIO())
    notes.setLevel(logging.WARNING)
    notes.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    converter.log.addHandler(notes)
    try:
        converter.start()
        return True, notes.stream.getvalue()
    except Exception:
        return False, notes.stream.getvalue() + traceback.format_exc()
    finally:
        converter.log.removeHandler(notes)


_worker: dict = {}


def _start_worker(assignment: str, scratch: str, submitted: str, started) -> None:
    # Kernels and nbgrader write to stderr; that would tear the progress bar apart.
    log = os.open(Path(scratch, f"worker-{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    from autograder.frontends.instructors.nbgrader.execute import SandboxExecute
    from autograder.frontends.instructors.nbgrader.stages import cells_key, grade_and_end_strays
    from autograder.sandbox.launch import start_fork_server
    from autograder.sandbox.oslayer import become_subreaper
    from autograder.sandbox.settings import Settings

    class Keep(SandboxExecute):
        def grade_file(self, notebook, chapter, numbers, seeds):
            # in this process, imports done; the student's code still runs only in the confined worker
            settings = Settings.read(cell_seconds=self.cell_timeout, stage_seconds=self.stage_timeout,
                                     total_seconds=self.total_timeout)
            return grade_and_end_strays(str(notebook), chapter, numbers, seeds, self.device, settings)

        def run_in_sandbox(self, nb, chapter):
            _worker["run"] = (cells_key(nb), super().run_in_sandbox(nb, chapter))
            return _worker["run"][1]

    become_subreaper()  # the orphans a submission leaves become children, ended after each grading
    start_fork_server(Settings.read())
    app = _app(assignment, "--log-level=ERROR")
    app.coursedir.submitted_directory = submitted
    _worker["started"] = started
    private = Path(scratch, f"gradebook-{os.getpid()}.db")
    shutil.copyfile(app.coursedir.db_url.removeprefix("sqlite:///"), private)
    app.coursedir.db_url = f"sqlite:///{private}"
    app.coursedir.autograded_directory = str(Path(scratch, "executed"))
    app.config.Autograde.autograde_preprocessors = [*_through_sandbox(app)[:-1], Keep]
    _worker["app"] = app


def _execute_one(student: str) -> tuple[str, dict] | None:
    """One student's sandboxed run, with the key of the cells it was computed from; whatever else
    happened here, the serial pass (which runs it again where there is no run) says."""
    _worker["started"].put((student, time.time()))  # the progress line names the students being graded
    _worker.pop("run", None)
    _run_converter(_worker["app"], student)
    return _worker.pop("run", None)


def mirror_submissions(app, students: list[str], mirror: Path) -> tuple[list[str], dict[str, list[str]], dict[str, str]]:
    """Copies of the submission folders, each notebook under the assignment's name: the students, their
    warnings (a renamed notebook), refusals."""
    from autograder.frontends.instructors.nbgrader.stages import submitted_notebook

    assignment = app.coursedir.assignment_id
    gradable, notes, refused = [], {}, {}
    for student in students:
        folder = Path(app.coursedir.format_path(app.coursedir.submitted_directory, student, assignment))
        chosen, note = submitted_notebook(folder, assignment)
        if chosen is None:
            refused[student] = note
            continue
        if note:
            notes[student] = [f"[WARNING] {note}"]
        copy = mirror / student / assignment
        shutil.copytree(folder, copy, symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
        shutil.copyfile(chosen, copy / f"{assignment}.ipynb")
        gradable.append(student)
    return gradable, notes, refused


def autograde(assignment: str, jobs: int, students: list[str] | None, progress) -> Summary:
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    from autograder.frontends.commands import Refused
    from autograder.frontends.instructors import class_report
    from autograder.frontends.instructors.nbgrader.execute import PRECOMPUTED, REUSED
    from autograder.frontends.instructors.nbgrader.stages import write_outcome
    from autograder.frontends.reports.diagnoses import DIAGNOSES

    # nbgrader 0.9 warns about its own session use with SQLAlchemy 2: harmless, it buries the progress bar
    warnings.filterwarnings("ignore", category=SAWarning)
    started = time.monotonic()
    app = _app(assignment, "--log-level=CRITICAL")  # warnings are collected per student instead
    pattern = app.coursedir.format_path(app.coursedir.submitted_directory, "*", assignment)
    everyone = sorted(Path(folder).parent.name for folder in glob.glob(pattern) if glob.glob(os.path.join(glob.escape(folder), "*.ipynb")))
    where = app.coursedir.format_path(app.coursedir.submitted_directory, "<student>", assignment)
    if unknown := sorted(set(students or []) - set(everyone)):
        raise SystemExit(f"no submission for {', '.join(unknown)} under {where} (submissions: {', '.join(everyone) or 'none'})")
    students = [s for s in everyone if not students or s in students]
    if not students:
        raise SystemExit(f"no submissions under {where}")
    with Gradebook(app.coursedir.db_url) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise SystemExit(f"the gradebook ({app.coursedir.db_url}) has no assignment {assignment}: "
                             "run `make release` (nbgrader generate_assignment) first") from None
    if not app.coursedir.db_url.startswith("sqlite:///") and jobs > 1:
        print(f"JOBS={jobs} needs an sqlite gradebook (each worker grades against a copy); grading serially")
        jobs = 1
    _through_sandbox(app)  # refuses a configuration that would run a kernel
    PRECOMPUTED.clear()
    REUSED.clear()
    for student in students:  # a student not graded now must not keep the last grading's diagnosis
        (Path(app.coursedir.root) / DIAGNOSES / student / f"{assignment}.json").unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        submitted = str(Path(scratch, "submitted"))
        gradable, warned, failed = mirror_submissions(app, students, Path(submitted))
        app.coursedir.submitted_directory = submitted

        def record(student: str) -> None:
            ok, notes = _run_converter(app, student)
            if ok:
                warned.setdefault(student, []).extend(
                    line for line in notes.splitlines() if line.strip() and not REMOVING.search(line))
            else:
                failed[student] = notes
                # the gradebook keeps the last grades: make export must not show them as this run's
                write_outcome(student, assignment, False, last_line(notes), root=app.coursedir.root)
            progress.advance(record_task)

        record_task = progress.add_task("recording in the gradebook" if jobs > 1 else "autograding serially",
                                        total=len(gradable))
        waiting = list(gradable)  # to be recorded, in this order unless a run finishes first
        if jobs > 1 and gradable:
            context = get_context("spawn")
            started_queue = context.Queue()
            task = progress.add_task(f"running {len(gradable)} notebooks, {jobs} at a time", total=len(gradable))
            with ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker,
                                     initargs=(assignment, scratch, submitted, started_queue)) as pool:
                futures = {pool.submit(_execute_one, s): s for s in gradable}
                pending, running = set(futures), {}
                while pending:
                    finished, pending = wait(pending, timeout=1, return_when=FIRST_COMPLETED)
                    while not started_queue.empty():
                        student, since = started_queue.get()
                        running[student] = since
                    for done in finished:
                        running.pop(futures[done], None)
                    progress.update(task, advance=len(finished), description=running_description(len(gradable), jobs, running))
                    # recorded while the others run: one writer (this process), no wait for the slowest
                    for done in sorted(finished, key=futures.get):
                        if not done.exception() and done.result() is not None:
                            PRECOMPUTED[futures[done]] = done.result()
                            waiting.remove(futures[done])
                            record(futures[done])
        # everyone else, serially (a run the workers could not finish runs here, sandboxed)
        for student in waiting:
            record(student)
    summary = Summary(students, time.monotonic() - started, failed, len(REUSED), warned,
                      summary_rows(app.coursedir.db_url, assignment, students, failed, warned))
    root = Path(app.coursedir.root)
    try:  # the class report from the records just written
        report = class_report.write_report(class_report.load_nbgrader(root, assignment), root / class_report.DEFAULT_OUT,
                                           source="nbgrader")
        summary.mistakes, summary.report = class_report.top_mistakes(report), str(class_report.DEFAULT_OUT / "index.html")
    except (OSError, Refused) as exc:
        summary.report = f"not written: {exc} (make class-report OUT=another/folder)"
    return summary


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(highlight=False)
    jobs = args.jobs or default_jobs()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        summary = autograde(args.assignment, jobs, args.student, progress)
    print_summary(summary, jobs, console, verbose=args.verbose)
    return 1 if summary.failed else 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", nargs="?", default=DEFAULT)  # the assignment id is the chapter id
    parser.add_argument("--jobs", "-j", type=int, default=None, help="submissions at a time (default: CPU cores)")
    parser.add_argument("--student", nargs="+", help="only these students (make autograde STUDENT=id)")
    parser.add_argument("--verbose", "-v", action="store_true", help="whole errors (tracebacks), not their last line")

