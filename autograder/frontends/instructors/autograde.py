"""``make autograde``: nbgrader autograde for a whole class, JOBS submissions at a time.

nbgrader autogrades one submission after another. The slow part of each one is the one
sandboxed run of the notebook (:class:`~autograder.frontends.instructors.nbgrader.execute.SandboxExecute`,
configured in place of nbgrader's kernel execution); the rest is bookkeeping. So:

1. JOBS worker processes run nbgrader's own Autograde converter on one student at a time,
   with the preprocessors up to ``SandboxExecute`` only, each against a private copy of the
   gradebook (sqlite takes one writer at a time) and into a scratch folder, and send the
   sandboxed run's result back to this process (in memory, through the pool's pipe: never
   a file that a worker, or anything the submission left running, could touch).
2. nbgrader's Autograde then runs once over the class, serially, on the real gradebook; its
   ``SandboxExecute`` takes the result computed for the same cells (the parent offers each
   worker's result to :mod:`autograder.frontends.instructors.nbgrader.precomputed`). Every row of the
   gradebook and every autograded notebook is written by nbgrader's own code, as in a serial
   run; a submission the workers could not finish is run there instead.

No process that runs student code can open the gradebook: that runs only in the confined
worker, which reads nothing of ``grading/`` or of this scratch folder.

    python -m autograder autograde [ASSIGNMENT] [--jobs N] [--student ID ...] [--verbose]

The end-of-run table is :mod:`autograder.frontends.instructors.class_summary`'s; the benchmark against
serial ``nbgrader autograde`` is :mod:`autograder.frontends.maintainers.class_bench`.
"""

from __future__ import annotations

import argparse
import glob
import io
import logging
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path

from autograder.chapters import DEFAULT
from autograder.frontends.instructors.class_summary import Summary, last_line, print_summary, running_description, summary_rows
from autograder.frontends.jobs import default_jobs

ASSIGNMENT = DEFAULT  # the nbgrader assignment id is the chapter id


def _app(assignment: str, *flags: str):
    """nbgrader's autograde app, configured exactly as the ``nbgrader autograde`` command is
    (nbgrader_config.py from the current directory), but not started."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    app = AutogradeApp()
    app.initialize([assignment, "--force", *flags])
    app.coursedir.assignment_id = assignment
    return app


def _steps(app) -> list:
    from nbgrader.converters import Autograde

    configured = app.config.Autograde.get("autograde_preprocessors")
    return list(configured or Autograde.class_traits()["autograde_preprocessors"].default())


def _through_sandbox(steps: list) -> list:
    """The configured autograde preprocessors up to the sandboxed run (what the workers run)."""
    from autograder.frontends.instructors.nbgrader.execute import SandboxExecute

    if SandboxExecute not in steps:
        raise SystemExit("nbgrader_config.py does not run SandboxExecute in place of Execute: make autograde "
                         "grades only in the sandbox (see the repository's nbgrader_config.py)")
    return steps[:steps.index(SandboxExecute) + 1]


def _run_converter(app, student: str) -> tuple[bool, str]:
    """nbgrader's Autograde for one student, as ``NbGraderAPI.autograde`` runs it: whether it
    succeeded, and its warnings and errors (with the traceback of a failure)."""
    from nbgrader.converters import Autograde

    app.coursedir.student_id = student
    converter = Autograde(coursedir=app.coursedir, parent=app)
    converter.force = True
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


def sqlite_path(db_url: str) -> Path | None:
    match = re.fullmatch(r"sqlite:///(.+)", db_url)
    return Path(match.group(1)) if match else None


# -- the workers ------------------------------------------------------------------------------

_worker: dict = {}


def _start_worker(assignment: str, scratch: str, executed: str, submitted: str, started=None) -> None:
    # Kernels and nbgrader write to stderr; that would tear the progress bar apart.
    log = os.open(Path(scratch, f"worker-{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    from autograder.sandbox.forkpool import start_fork_server
    from autograder.sandbox.settings import Settings
    from autograder.sandbox.strays import become_subreaper

    # This worker grades its notebooks itself (grade_file below): the orphans a submission
    # leaves become its children, which it ends after each grading.
    become_subreaper()
    # Each notebook's confined worker is a fork of one preloaded process: no Python and
    # PyTorch start-up per notebook (autograder.sandbox.forkserver).
    start_fork_server(Settings.read())
    app = _app(assignment, "--log-level=ERROR")
    app.coursedir.submitted_directory = submitted
    _worker["started"] = started
    private = Path(scratch, f"gradebook-{os.getpid()}.db")
    shutil.copyfile(sqlite_path(app.coursedir.db_url), private)
    app.coursedir.db_url = f"sqlite:///{private}"
    app.coursedir.autograded_directory = executed
    app.config.Autograde.autograde_preprocessors = _through_sandbox(_steps(app))
    _worker["app"] = app


def _execute_one(student: str) -> tuple[str, bool, str, tuple[str, dict] | None]:
    """One student's sandboxed run, returned to the parent with the cells it was computed from
    (``(cells_key, result)``, what the parent offers to :mod:`.nbgrader.precomputed`)."""
    from autograder.frontends.instructors.nbgrader.execute import SandboxExecute
    from autograder.frontends.instructors.nbgrader.stages import cells_key

    computed = {}

    class Keep(SandboxExecute):
        def grade_file(self, notebook, chapter, numbers, seeds):
            # In this worker, which has torch, the grader and the checks imported already (no
            # process start and imports per notebook); the student's code still runs only in
            # the confined worker that grading starts.
            from autograder.frontends.instructors.stagegrades import grade_and_end_strays

            return grade_and_end_strays(str(notebook), chapter, numbers, seeds, self.device, self.settings())

        def run_in_sandbox(self, nb, chapter):
            result = super().run_in_sandbox(nb, chapter)
            computed["run"] = (cells_key(nb), result)
            return result

        def keep_diagnosis(self, student, assignment, result):
            pass  # the parent's serial pass records it, with the gradebook

    if _worker.get("started") is not None:  # the progress display names the students being graded
        _worker["started"].put((student, time.time()))
    app = _worker["app"]
    steps = list(app.config.Autograde.autograde_preprocessors)
    steps[-1] = Keep
    app.config.Autograde.autograde_preprocessors = steps
    ok, notes = _run_converter(app, student)
    return student, ok, notes, computed.get("run")


# -- make autograde ------------------------------------------------------------------------

def mirror_submissions(app, students: list[str], mirror: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """A copy of each student's submission folder for nbgrader to read, with the submission
    under the assignment's notebook name (a renamed notebook is graded as the assignment's;
    the student's own folder is never changed). Returns the students to grade, a note per
    student, and the students who cannot be graded with the reason (two candidate notebooks)."""
    from autograder.frontends.instructors.nbgrader.stages import submitted_notebook

    assignment = app.coursedir.assignment_id
    gradable, notes, refused = [], {}, {}
    for student in students:
        folder = Path(app.coursedir.format_path(app.coursedir.submitted_directory, student, assignment))
        chosen, note = submitted_notebook(folder, assignment)
        if note:
            notes[student] = note
        if chosen is None:
            refused[student] = note
            continue
        copy = mirror / student / assignment
        shutil.copytree(folder, copy, symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
        shutil.copyfile(chosen, copy / f"{assignment}.ipynb")
        gradable.append(student)
    return gradable, notes, refused


def submitted_students(app) -> list[str]:
    """Students with a notebook under submitted/<student>/<assignment>/, as nbgrader finds them."""
    pattern = app.coursedir.format_path(app.coursedir.submitted_directory, "*", app.coursedir.assignment_id)
    return sorted(Path(folder).parent.name for folder in glob.glob(pattern) if glob.glob(os.path.join(glob.escape(folder), "*.ipynb")))


def autograde(assignment: str = ASSIGNMENT, jobs: int | None = None, students: list[str] | None = None,
              progress=None) -> Summary:
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    from autograder.frontends.instructors.nbgrader import precomputed
    from autograder.frontends.instructors.nbgrader.outcome import fail_outcome

    # nbgrader 0.9's gradebook warns about its own session use with SQLAlchemy 2 (harmless,
    # several lines per submission), which would bury the progress bar.
    warnings.filterwarnings("ignore", category=SAWarning)
    started = time.monotonic()
    jobs = jobs or default_jobs()
    app = _app(assignment, "--log-level=CRITICAL")  # warnings are collected per student instead
    everyone = submitted_students(app)
    unknown = sorted(set(students or []) - set(everyone))
    if unknown:
        raise SystemExit(f"no submission for {', '.join(unknown)} under "
                         f"{app.coursedir.format_path(app.coursedir.submitted_directory, '<student>', assignment)} "
                         f"(submissions: {', '.join(everyone) or 'none'})")
    students = [s for s in everyone if not students or s in students]
    if not students:
        raise SystemExit(f"no submissions under {app.coursedir.format_path(app.coursedir.submitted_directory, '<student>', assignment)}")
    with Gradebook(app.coursedir.db_url) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise SystemExit(f"the gradebook ({app.coursedir.db_url}) has no assignment {assignment}: "
                             "run `make release` (nbgrader generate_assignment) first") from None
    if sqlite_path(app.coursedir.db_url) is None and jobs > 1:
        print(f"JOBS={jobs} needs an sqlite gradebook (each worker grades against a copy); grading serially")
        jobs = 1
    _through_sandbox(_steps(app))  # refuses a configuration that would run a kernel
    failed: dict[str, str] = {}
    precomputed.clear()
    forget_diagnoses(Path(app.coursedir.root), students, assignment)
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        executed = str(Path(scratch, "executed"))
        # nbgrader reads the submissions from a copy in which a renamed notebook has the
        # assignment's name; the students' folders stay as they were handed in.
        submitted = str(Path(scratch, "submitted"))
        students, notes_by_student, refused = mirror_submissions(app, students, Path(submitted))
        failed.update(refused)
        app.coursedir.submitted_directory = submitted
        logs: dict[str, str] = {}

        def record(student: str) -> None:
            """nbgrader's own converter records the student, with the run a worker computed."""
            ok, notes = _run_converter(app, student)
            if ok:
                failed.pop(student, None)  # the workers failed, the serial pass did not
                logs[student] = "".join(f"{student}: {line}\n" for line in notes.splitlines())
            else:
                failed[student] = notes
                # the gradebook keeps the last grades: make export must not show them as this run's
                fail_outcome(student, assignment, last_line(notes), app.coursedir.root)
            if progress:
                progress.advance(record_task)

        record_task = progress.add_task("recording in the gradebook" if jobs > 1 else "autograding serially",
                                        total=len(students)) if progress else None
        waiting = list(students)  # to be recorded, in this order unless a run finishes first
        if jobs > 1 and students:
            context = get_context("spawn")
            started_queue = context.Queue()
            task = progress.add_task(f"running {len(students)} notebooks, {jobs} at a time", total=len(students)) \
                if progress else None
            with ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker,
                                     initargs=(assignment, scratch, executed, submitted, started_queue)) as pool:
                futures = {pool.submit(_execute_one, s): s for s in students}
                pending, running = set(futures), {}
                while pending:
                    finished, pending = wait(pending, timeout=1, return_when=FIRST_COMPLETED)
                    while not started_queue.empty():
                        student, since = started_queue.get()
                        running[student] = since
                    ran = []
                    for done in finished:
                        running.pop(futures[done], None)
                        try:
                            _, ok, notes, run = done.result()
                        except Exception as exc:
                            ok, notes, run = False, f"the worker process failed ({type(exc).__name__}: {exc})", None
                        if not ok:
                            failed[futures[done]] = notes
                        if run is not None:
                            precomputed.offer(futures[done], *run)
                            ran.append(futures[done])
                        if progress:
                            progress.advance(task)
                    if progress:
                        progress.update(task, description=running_description(len(students), jobs, running))
                    # Recorded while the other notebooks run: the gradebook has one writer (this
                    # process), and this work no longer waits for the slowest notebook.
                    for student in sorted(ran):
                        waiting.remove(student)
                        record(student)
        # nbgrader's own serial pass records everyone else (a run the workers could not finish
        # runs here, in the sandbox, as in a serial nbgrader autograde).
        for student in waiting:
            record(student)
    replayed = precomputed.reused_count()
    precomputed.clear()
    everyone_graded = sorted(set(students) | set(refused))
    log = "".join(logs[s] for s in sorted(logs))
    summary = Summary(everyone_graded, time.monotonic() - started, failed, replayed, log,
                      notes_by_student, summary_rows(app.coursedir.db_url, assignment, everyone_graded, failed,
                                                     notes_by_student, log))
    summary.mistakes, summary.report = class_report(Path(app.coursedir.root), assignment)
    return summary


def forget_diagnoses(root: Path, students: list[str], assignment: str) -> None:
    """The diagnosis records of the students about to be graded are removed first: one that
    cannot be graded now must not keep the last grading's diagnosis in the class report."""
    from autograder.frontends.reports.diagnoses import DIAGNOSES

    for student in students:
        (root / DIAGNOSES / student / f"{assignment}.json").unlink(missing_ok=True)


def class_report(root: Path, assignment: str) -> tuple[list[str], str]:
    """The class report (make class-report) from the diagnosis records just written: the three
    most common mistakes, and where the report is (or why it could not be written)."""
    from autograder.frontends.instructors import class_report as report
    from autograder.frontends.reports.safe_write import OutputRefused

    out = root / report.DEFAULT_OUT
    try:
        data = report.write_report(report.load_nbgrader(root, assignment), out, source="nbgrader")
    except (OSError, OutputRefused, report.ReportInputError) as exc:
        return [], f"not written: {exc} (make class-report OUT=another/folder)"
    return report.top_mistakes(data), str(report.DEFAULT_OUT / "index.html")


def _progress(console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=False)


def autograde_command(args) -> int:
    from rich.console import Console

    console = Console(highlight=False)
    jobs = args.jobs or default_jobs()
    with _progress(console) as progress:
        summary = autograde(args.assignment, jobs, args.student, progress)
    print_summary(summary, jobs, console, verbose=args.verbose)
    return 1 if summary.failed else 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    parser.add_argument("--jobs", "-j", type=int, default=None, help="submissions at a time (default: CPU cores)")
    parser.add_argument("--student", nargs="+", help="only these students (make autograde STUDENT=id)")
    parser.add_argument("--verbose", "-v", action="store_true", help="whole errors (tracebacks), not their last line")


def run(args: argparse.Namespace) -> int:
    return autograde_command(args)


def main(argv=None) -> int:
    from autograder.frontends import commands

    return commands.main(["autograde", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
