"""``make autograde``: nbgrader autograde for a whole class, JOBS submissions at a time.

nbgrader autogrades one submission after another. The slow part of each one is the one
sandboxed run of the notebook (:class:`~autograder.frontends.nbgrader_plugins.SandboxExecute`,
configured in place of nbgrader's kernel execution); the rest is bookkeeping. So:

1. JOBS worker processes run nbgrader's own Autograde converter on one student at a time,
   with the preprocessors up to ``SandboxExecute`` only, each against a private copy of the
   gradebook (sqlite takes one writer at a time) and into a scratch folder, and send the
   sandboxed run's result back to this process (in memory, through the pool's pipe: never
   a file that a worker, or anything the submission left running, could touch).
2. nbgrader's Autograde then runs once over the class, serially, on the real gradebook; its
   ``SandboxExecute`` takes the result computed for the same cells. Every row of the
   gradebook and every autograded notebook is written by nbgrader's own code, as in a serial
   run; a submission the workers could not finish is run there instead.

No process that runs student code can open the gradebook: that runs only in the confined
worker, which reads nothing of ``grading/`` or of this scratch folder.

``python -m autograder.frontends.classgrade bench`` times serial ``nbgrader autograde`` against this
on generated submissions and checks that both gradebooks agree.
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from autograder.chapters import DEFAULT, load

ASSIGNMENT = DEFAULT  # the nbgrader assignment id is the chapter id
REPO = Path(__file__).resolve().parents[2]  # the checkout


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


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
    from autograder.frontends.nbgrader_plugins import SandboxExecute

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
    from autograder.sandbox.strays import become_subreaper

    # This worker grades its notebooks itself (grade_file below): the orphans a submission
    # leaves become its children, which it ends after each grading.
    become_subreaper()
    # Each notebook's confined worker is a fork of one preloaded process: no Python and
    # PyTorch start-up per notebook (autograder.sandbox.forkserver).
    start_fork_server()
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
    """One student's sandboxed run, returned to the parent with the cells it was computed from."""
    from autograder.frontends.nbgrader_plugins import SandboxExecute

    computed = {}

    class Keep(SandboxExecute):
        def grade_file(self, notebook, chapter, numbers, seeds):
            # In this worker, which has torch, the grader and the checks imported already (no
            # process start and imports per notebook); the student's code still runs only in
            # the confined worker that grading starts.
            from autograder.frontends.stagegrades import grade_and_end_strays

            return grade_and_end_strays(str(notebook), chapter, numbers, seeds, self.device, self.limits())

        def run_in_sandbox(self, nb, chapter):
            from autograder.frontends.nbgrader_plugins import cells_key

            result = super().run_in_sandbox(nb, chapter)
            computed["run"] = (cells_key(nb), result)
            return result

    if _worker.get("started") is not None:  # the progress display names the students being graded
        _worker["started"].put((student, time.time()))
    app = _worker["app"]
    steps = list(app.config.Autograde.autograde_preprocessors)
    steps[-1] = Keep
    app.config.Autograde.autograde_preprocessors = steps
    ok, notes = _run_converter(app, student)
    return student, ok, notes, computed.get("run")


# -- make autograde ------------------------------------------------------------------------

@dataclass
class Summary:
    students: list[str]
    seconds: float
    failed: dict[str, str]
    replayed: int
    log: str
    notes: dict[str, str] = field(default_factory=dict)  # student -> what the grader should know (renamed notebook)
    rows: list[dict] = field(default_factory=list)  # the summary table, read back from the gradebook


def mirror_submissions(app, students: list[str], mirror: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """A copy of each student's submission folder for nbgrader to read, with the submission
    under the assignment's notebook name (a renamed notebook is graded as the assignment's;
    the student's own folder is never changed). Returns the students to grade, a note per
    student, and the students who cannot be graded with the reason (two candidate notebooks)."""
    from autograder.frontends.nbgrader_plugins import submitted_notebook

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

    from autograder.frontends.nbgrader_plugins import SandboxExecute

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
    SandboxExecute.precomputed.clear()
    SandboxExecute.reused = 0
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
                            SandboxExecute.precomputed[futures[done]] = run
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
    SandboxExecute.precomputed.clear()
    everyone_graded = sorted(set(students) | set(refused))
    log = "".join(logs[s] for s in sorted(logs))
    return Summary(everyone_graded, time.monotonic() - started, failed, SandboxExecute.reused, log,
                   notes_by_student, summary_rows(app.coursedir.db_url, assignment, everyone_graded, failed,
                                                  notes_by_student, log))


def running_description(total: int, jobs: int, running: dict[str, float]) -> str:
    """The progress line: the students whose notebook is running now, longest first, with how long."""
    if not running:
        return f"running {total} notebooks, {jobs} at a time"
    now = time.time()
    longest = sorted(running.items(), key=lambda item: item[1])
    named = ", ".join(f"{student} {int(now - since) // 60}:{int(now - since) % 60:02d}" for student, since in longest[:4])
    return f"running {named}" + (f" (+{len(longest) - 4})" if len(longest) > 4 else "")


# nbgrader's and LatePenalty's lines about lateness: the table's "late (penalty)" column says it.
LATE_NOTICE = re.compile(r"seconds late$|Late submission penalty|hours late, \d+ day")


def summary_rows(db_url: str, assignment: str, students: list[str], failed: dict[str, str], notes: dict[str, str],
                 log: str) -> list[dict]:
    """One row per student for the end of make autograde: score (as the gradebook has it),
    extra credit, late penalty and problems; the students with problems first."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    with Gradebook(db_url) as gb:
        for student in students:
            problems = []
            if student in failed:
                problems.append("NOT GRADED: " + last_line(failed[student]))
            if notes.get(student) and student not in failed:
                problems.append(notes[student])
            problems += sorted({line.split("[WARNING] ", 1)[1] for line in log.splitlines()
                                if line.startswith(f"{student}: ") and "[WARNING] " in line and not LATE_NOTICE.search(line)
                                and not re.search(r"Removing existing (assignment|notebook)", line)})
            row = {"student": student, "score": "", "extra": "", "late": "", "problems": problems}
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                submission = None
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
    """The reason of a failure (its last non-empty line), without the traceback above it."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "unknown error"


def print_summary(summary: Summary, jobs: int, console, verbose: bool = False) -> None:
    from rich.table import Table

    # --force removes the previous autograded copy of every submission: expected, not news.
    notes = [line for line in summary.log.splitlines()
             if line.strip() and not re.search(r"Removing existing (assignment|notebook)", line)]
    for line in notes if verbose else []:  # each student's warnings are in the table's problems column
        console.print(line, markup=False, style="yellow")
    for student, error in summary.failed.items():
        one_line = len(error.strip().splitlines()) <= 1
        shown = error.strip() if verbose or one_line else last_line(error) + "  (V=1: the whole error)"
        console.print(f"{student}: not autograded: {shown}", markup=False, style="red")
    table = Table(title="make autograde: one row per student, problems first", title_justify="left")
    for column in ("student", "score", "extra credit", "late (penalty)", "problems"):
        table.add_column(column, overflow="fold")
    for row in summary.rows:
        table.add_row(row["student"], row["score"] or "-", row["extra"], row["late"],
                      "; ".join(row["problems"]) or ("late" if row["late"] else "ok"),
                      style="red" if any(p.startswith("NOT GRADED") for p in row["problems"]) else None)
    if summary.rows:
        console.print(table)
    graded = len(summary.students) - len(summary.failed)
    how = f"JOBS={jobs}" + (f", {graded - summary.replayed} executed serially"
                            if jobs > 1 and summary.replayed < graded else "")
    console.print(f"Autograded {graded}/{len(summary.students)} submissions in {summary.seconds:.0f} s ({how}). "
                  "Scores: make export; feedback: make feedback.")


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


# -- simulated students and the benchmark ----------------------------------------------------

SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*\n", re.MULTILINE)

# Known mistakes that cost points in their own stage only (a wrong CausalAttention would also
# break the wrapper of stage 5, a wrong MultiHeadAttention the GPT-2 module of stage 7).
MISTAKES = {
    1: ("exp_x.sum(dim=-1, keepdim=True)", "exp_x.sum(dim=0, keepdim=True)"),        # wrong axis
    2: ("return attn_weights @ inputs", "return attn_weights.T @ inputs"),          # transposed weights
    3: ("attn_scores / math.sqrt(keys.shape[-1])", "attn_scores"),                   # no scaling
}


def student_notebook(release: dict, solution: dict, *, done: set[int] | None = None, mistake: int | None = None,
                     broken: int | None = None) -> dict:
    """A submission as a student would hand it in: the release with the solution cells of
    the stages in ``done`` filled in (all by default), one stage's known mistake, or one
    stage's cell broken by a syntax error."""
    answers = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in solution["cells"]
               if c["metadata"].get("nbgrader", {}).get("solution")}
    notebook = json.loads(json.dumps(release))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        match = re.fullmatch(r"stage(\d+)_\w+_solution", grade_id)
        if not match or (done is not None and int(match.group(1)) not in done):
            continue
        number = int(match.group(1))
        source = SOLUTION_MARKERS.sub("", answers[grade_id])
        if number == mistake:
            wrong, right = MISTAKES[number][1], MISTAKES[number][0]
            assert right in source, (number, right)
            source = source.replace(right, wrong)
        if number == broken:
            source = source.replace("):\n", ")\n", 1)  # a missing colon: the whole cell fails to compile
        cell["source"] = source
    return notebook


def class_of(size: int) -> dict[str, dict]:
    """``size`` generated submissions, a realistic mix: full marks, untouched, part done, one
    stage wrong, one cell broken."""
    chapter = load(ASSIGNMENT)
    release = json.loads(chapter.release_notebook(REPO).read_text())
    solution = json.loads(chapter.source_notebook(REPO).read_text())
    kinds = [("perfect", {}), ("blank", {"done": set()}), ("stages1to4", {"done": {1, 2, 3, 4}}),
             *[(f"mistake{n}", {"mistake": n}) for n in MISTAKES], ("broken2", {"broken": 2})]
    return {f"s{i:02d}_{kinds[i % len(kinds)][0]}": student_notebook(release, solution, **kinds[i % len(kinds)][1])
            for i in range(size)}


def new_course(root: Path, submissions: dict[str, dict]) -> None:
    """A course folder like the repository's (sources, config, gradebook) with these submissions."""
    root.mkdir(parents=True)
    shutil.copytree(REPO / "solutions", root / "solutions", ignore=shutil.ignore_patterns(".*"))
    shutil.copy(REPO / "nbgrader_config.py", root)
    (root / "grading").mkdir()
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    for student, notebook in submissions.items():
        folder = root / "grading" / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook, indent=1))


def nbgrader_env() -> dict:
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs alembic from PATH
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-m", "nbgrader", *args, "--log-level=ERROR"], cwd=root,
                          env=nbgrader_env(), capture_output=True, text=True, check=True)


def gradebook_rows(root: Path, assignment: str = ASSIGNMENT) -> dict[tuple, tuple]:
    """What autograde writes to a course's gradebook, read back through nbgrader's API: per
    submission its timestamp and late penalty, per grade cell its scores and whether it needs
    a manual grade, per answer cell its automatic comment."""
    from nbgrader.api import Gradebook

    rows = {}
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}") as gb:
        for submission in gb.find_assignment(assignment).submissions:
            student = submission.student.id
            rows[(student,)] = (str(submission.timestamp), submission.late_submission_penalty)
            for nb in submission.notebooks:
                for grade in nb.grades:
                    rows[(student, nb.name, grade.name)] = (grade.auto_score, grade.manual_score, grade.max_score,
                                                            grade.needs_manual_grade)
                for comment in nb.comments:
                    rows[(student, nb.name, comment.name, "comment")] = (comment.auto_comment, comment.manual_comment)
    return rows


def total_scores(rows: dict[tuple, tuple]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for key, value in rows.items():
        if len(key) == 3:
            totals[key[0]] = totals.get(key[0], 0.0) + (value[1] if value[1] is not None else value[0] or 0.0)
    return totals


# Appended to the baseline course's nbgrader_config.py: nbgrader's own kernel execution, no
# sandbox, the test cells grading in the kernel as plain nbgrader would have them grade (the
# visible and the hidden examples). Under autograde a test cell defers to the sandbox and
# grades nothing (notebook.grade_stage); the kernel is told it runs under nbgrader's validate
# instead, so the baseline does the grading work it would do without this repository.
PLAIN_NBGRADER = """
from nbgrader.converters import Autograde as _Autograde
from nbgrader.preprocessors import Execute as _Execute


class _KernelGrades(_Execute):
    # nbconvert's preprocess starts the kernel through the synchronous start_new_kernel, a
    # wrapper of nbclient's own async_start_new_kernel (an override of that one is never called).
    def start_new_kernel(self, **kwargs):
        import os
        kwargs["env"] = {**os.environ, "NBGRADER_EXECUTION": "validate"}
        return super().start_new_kernel(**kwargs)


c.Autograde.autograde_preprocessors = [
    _KernelGrades if step is _Execute else step
    for step in _Autograde.class_traits()["autograde_preprocessors"].default()]
c.Execute.timeout = 60
"""


def bench(size: int, jobs: int, keep: Path | None, serial_sandbox: bool = True) -> int:
    """Times plain serial ``nbgrader autograde`` (nbgrader's kernel execution, no sandbox: the
    baseline) against ``make autograde JOBS=n`` on the same generated class; with
    ``serial_sandbox``, also serial ``nbgrader autograde`` with this repository's configuration,
    whose gradebook must equal make autograde's row for row."""
    scratch = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="autograde-bench-"))
    submissions = class_of(size)
    print(f"{size} generated submissions; {default_jobs()} CPU core(s); load average "
          f"{os.getloadavg()[0]:.1f} before", flush=True)
    new_course(scratch / "plain", submissions)
    for copy in ("parallel", *(["serial"] if serial_sandbox else [])):
        shutil.copytree(scratch / "plain", scratch / copy)
    with open(scratch / "plain" / "nbgrader_config.py", "a") as config:
        config.write(PLAIN_NBGRADER)
    nbgrader_cmd = [sys.executable, "-I", "-m", "nbgrader", "autograde", ASSIGNMENT]
    runs = {
        "plain serial `nbgrader autograde` (kernel, no sandbox)": (scratch / "plain", nbgrader_cmd),
        f"`make autograde JOBS={jobs}`": (scratch / "parallel", [sys.executable, "-I", "-m",
                                                                 "autograder.frontends.classgrade",
                                                                 "autograde", ASSIGNMENT, "--jobs", str(jobs)]),
    }
    if serial_sandbox:
        runs["serial `nbgrader autograde` (this configuration)"] = (scratch / "serial", nbgrader_cmd)
    seconds = {}
    for name, (root, command) in runs.items():
        started = time.monotonic()
        proc = subprocess.run(command, cwd=root, env=nbgrader_env(), capture_output=True, text=True)
        seconds[name] = time.monotonic() - started
        print(f"{name}: {seconds[name]:.0f} s (exit status {proc.returncode}, load average "
              f"{os.getloadavg()[0]:.1f})", flush=True)
        if proc.returncode != 0:
            print("\n".join((proc.stdout + proc.stderr).splitlines()[-20:]))
            return 1
    parallel = gradebook_rows(scratch / "parallel")
    same = True
    if serial_sandbox:
        same = gradebook_rows(scratch / "serial") == parallel
        print(f"make autograde and serial nbgrader autograde agree on every gradebook row "
              f"({len(parallel)} rows, {size} submissions): {same}")
    # The baseline must have graded (its test cells in the kernel), else it times less work.
    plain_totals, parallel_totals = total_scores(gradebook_rows(scratch / "plain")), total_scores(parallel)
    graded_alike = plain_totals == parallel_totals
    print(f"totals: {sorted(set(parallel_totals.values()))}; the plain run's equal them for every student: "
          f"{graded_alike}")
    if not graded_alike:
        print("differing students (plain, make autograde): " + ", ".join(
            f"{s} ({plain_totals.get(s)}, {parallel_totals.get(s)})" for s in sorted(set(plain_totals) | set(parallel_totals))
            if plain_totals.get(s) != parallel_totals.get(s)))
    plain_s, parallel_s = list(seconds.values())[:2]
    print(f"ratio plain serial nbgrader / make autograde: {plain_s / parallel_s:.2f}")
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if same and graded_alike else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.frontends.classgrade", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("autograde", help="autograde every submission (make autograde)")
    run.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    run.add_argument("--jobs", "-j", type=int, default=None, help="submissions at a time (default: CPU cores)")
    run.add_argument("--student", nargs="+", help="only these students (make autograde STUDENT=id)")
    run.add_argument("--verbose", "-v", action="store_true", help="whole errors (tracebacks), not their last line")
    timing = commands.add_parser("bench", help="serial nbgrader autograde against make autograde")
    timing.add_argument("--submissions", type=int, default=40)
    timing.add_argument("--jobs", "-j", type=int, default=None)
    timing.add_argument("--keep", type=Path, help="build the courses here and keep them")
    timing.add_argument("--no-serial-sandbox", action="store_true",
                        help="skip the serial run with this configuration (and the gradebook comparison)")
    args = parser.parse_args(argv)
    if args.command == "autograde":
        return autograde_command(args)
    return bench(args.submissions, args.jobs or default_jobs(), args.keep, not args.no_serial_sandbox)


if __name__ == "__main__":
    sys.exit(main())
