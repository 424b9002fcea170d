"""Broken and hostile submissions (tests/hostile/): every one ends in a valid results file
with an honest score and a message a student can act on, in bounded time, through the
command line, with the submitted file unchanged and no process of the submission left.

Each case grades stages 1 and 2 only (the cases live there), so the corpus stays fast; the
cases are graded two at a time, once per session, by the ``graded`` fixture. ``make test``,
``make ci-grade`` and a grader killed from outside have a test each at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import jsonschema
import pytest
from support import REPO, SOLUTION, TESTS

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.engine import run_stage
from autograder.core.submission import Submission
from autograder.frontends.students import cli
from autograder.sandbox import launch
from autograder.sandbox.loader import read_cells
from autograder.sandbox.settings import Limits, Settings
from autograder.sandbox.worker import Worker

stage = CHAPTER.stage

HOSTILE = TESTS / "hostile"
SCHEMA = json.loads((TESTS / "schemas" / "gradescope_results.schema.json").read_text())
QUICK_LIMITS = ("--stage-timeout", "5", "--cell-timeout", "3")  # the time-limit cases, kept short


@dataclass(frozen=True)
class Case:
    file: str
    score: float
    exit_code: int
    says: tuple[str, ...]  # shown on the console and written to results.json
    options: tuple[str, ...] = ()
    seconds: float = 60.0  # bound on the whole grading, start of the command to its end
    # Through `python -m autograder` in a process of its own (with a timeout): the cases that
    # attack the grader's process (its command line, its signals), the endless loops, and the
    # three kinds an independent test set tries. The others call cli.main in this process: the
    # same code, without paying 2 s of interpreter start-up each.
    own_process: bool = False


CASES = [
    # The file cannot be graded at all: exit 2, the reason, a valid 0.
    Case("malformed_json.ipynb", 0, 2, ("not valid notebook JSON", "restore it from git")),
    Case("empty.ipynb", 0, 2, ("is empty",)),
    Case("exported.html", 0, 2, ("takes the notebook (.ipynb)",)),
    Case("archive.ipynb", 0, 2, ("not a text file",)),
    Case("no_code_cells.ipynb", 0, 2, ("has no code cells",)),
    # Broken code: the rest is still graded, the message names the problem.
    # a cell named as the student finds it (its first line), never by its position
    Case("syntax_error.ipynb", 10, 1, ('cell "def compute_attn_scores(inputs):" raised SyntaxError',)),
    Case("missing_name.py", 0, 1, ("`softmax_naive` is not defined",)),
    Case("wrong_signature.py", 0, 1, ("missing 1 required positional argument", "signature differs")),
    Case("class_not_function.py", 0, 1, ("`softmax_naive` is a class, not a function",)),
    Case("returns_numpy.py", 9, 1, ("returned ndarray", "returned list", "keep the computation in torch")),
    Case("nan_outputs.py", 0, 1, ("contains NaN",)),
    Case("wrong_dtype.py", 4, 1, ("has dtype torch.float64, expected torch.float32",)),
    Case("wrong_device.py", 0, 1, ("returned tensor on device 'meta'",)),
    # Time, memory and output: limited; the other stages are still graded.
    Case("endless_loop_at_load.ipynb", 25, 0, (), QUICK_LIMITS, own_process=True),
    Case("endless_loop_in_stage.py", 15, 1, ("stopped after 5 s, the time limit of a stage",), QUICK_LIMITS, own_process=True),
    Case("slow_stage.py", 18, 1, ("1.2 stopped after 5 s",), QUICK_LIMITS),
    Case("huge_allocation.py", 15, 1, ("can't allocate memory", "allocates far more memory"), seconds=45),
    Case("print_flood.py", 10, 1, ()),
    # Exits and kills, at import and inside a stage.
    Case("sys_exit_at_import.py", 0, 1, ("raised SystemExit",)),
    Case("os_exit_at_import.py", 0, 1, ("ended the grading process",), own_process=True),
    Case("kill_self_at_import.py", 0, 1, ("ended the grading process",)),
    Case("exit_in_one_cell.ipynb", 25, 0, ()),
    Case("exits_inside_stages.py", 9, 1, ("ended the grading process during this stage", "called sys.exit()")),
    Case("kills_grader.py", 15, 1, ("PermissionError",), own_process=True),
    # Cheating: never more than the outputs earn.
    Case("blank_stub.py", 0, 1, ("not implemented yet",)),
    Case("patches_comparisons.py", 0, 1, ("differs from the expected values",), own_process=True),
    Case("writes_results.py", 0, 1, ("not implemented yet",), own_process=True),
    Case("forks_daemon.py", 0, 1, ("not implemented yet",), own_process=True),
    Case("rewrites_itself.py", 0, 1, ("not implemented yet",), own_process=True),
    Case("markup_in_message.py", 0, 1, ("raised ValueError: [/red] [bold]",)),
    Case("skips_escaping.py", 0, 1, ("raised ValueError: ?[2J?[H?[32mTotal",)),
    Case("long_lines_in_errors.py", 0, 1, ("raised ValueError: oops  Total: 100/100",)),
    Case("seventeen_dims.py", 0, 1, ("the grader cannot check (bad tensor shape",)),
    Case("partly_wrong_random.py", 10, 1, ("softmax over the wrong dimension",)),
    # The fences: the answers, the grader's reference and the network are out of reach.
    Case("reads_solutions.py", 0, 1, ("PermissionError",)),
]
BY_FILE = {case.file: case for case in CASES}
# Outcomes the tests after the parametrized one look at, whichever tests a session selects.
READ_BY_OTHER_TESTS = ("blank_stub.py", "patches_comparisons.py", "partly_wrong_random.py", "wrong_dtype.py",
                       "markup_in_message.py", "skips_escaping.py", "print_flood.py", "endless_loop_at_load.ipynb",
                       "exit_in_one_cell.ipynb", "long_lines_in_errors.py")


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    results: dict | None
    unchanged: bool
    strays: list[str]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _processes_marked(token: str) -> dict[int, str]:
    """Processes whose environment carries ``token``: the worker's scratch folder, which is its
    HOME and TMPDIR, so everything it started inherits it; or that run in such a folder (a worker
    forked from the grader shows the grader's environment in /proc). Each with its command line
    and folder."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cwd = os.readlink(entry / "cwd")
                if token.encode() in (entry / "environ").read_bytes() or cwd.startswith(token):
                    # Whole: the worker's command line holds the checkout's path twice, of any length.
                    command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    found[int(entry.name)] = f"{command} (in {cwd})"
            except OSError:
                continue
    return found


def _scratch_parent(home: Path) -> Path:
    """Where the gradings of a test make their workers' scratch folders (TMPDIR): its own."""
    folder = home / "tmp"
    folder.mkdir(exist_ok=True)
    return folder


def _mark(home: Path) -> str:
    """What the environment of each process of those workers holds (_processes_marked)."""
    return f"{_scratch_parent(home)}{os.sep}autograder-"


def _environment(home: Path) -> dict:
    # COLUMNS: rich wraps table cells at the terminal's width; wide enough that no message breaks.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "COLUMNS": "4000",
            "TMPDIR": str(_scratch_parent(home))}


def _grade(case: Case, workdir: Path) -> Outcome:
    workdir.mkdir()
    submission = workdir / case.file
    shutil.copyfile(HOSTILE / case.file, submission)  # graded as a copy: the corpus stays intact
    before = _sha256(submission)
    results = workdir / "results.json"
    arguments = [str(submission), "--results", str(results), "--stage", "1", "2", *case.options]
    token = _mark(workdir)
    started = time.monotonic()
    if case.own_process:
        # A session of its own: a submission that signals the grader's process group cannot reach pytest.
        proc = subprocess.run([sys.executable, "-m", "autograder", *arguments], cwd=REPO, capture_output=True,
                              text=True, timeout=case.seconds + 60, env=_environment(workdir),
                              start_new_session=True)
        returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    else:
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(os.environ, {"COLUMNS": "4000"}), mock.patch.object(tempfile, "tempdir", str(_scratch_parent(workdir))), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            returncode = cli.main(arguments)
        stdout, stderr = out.getvalue(), err.getvalue()
    seconds = time.monotonic() - started
    time.sleep(0.2)  # a process the grader missed would still be there
    strays = _processes_marked(token)
    for pid in strays:  # leave the machine clean even when the assertion below fails
        os.kill(pid, signal.SIGKILL)
    return Outcome(returncode, stdout, stderr, seconds,
                   json.loads(results.read_text()) if results.exists() else None,
                   submission.exists() and _sha256(submission) == before, list(strays.values()))


@pytest.fixture(scope="module")
def graded(request, tmp_path_factory) -> dict[str, Outcome]:
    """Grade the cases this session selected (and those the comparisons below need), two at
    a time: one per core of a small CI machine."""
    selected = {item.callspec.params["case"].file for item in request.session.items
                if item.module is sys.modules[__name__] and hasattr(item, "callspec")
                and "case" in item.callspec.params}
    wanted = sorted(selected | set(READ_BY_OTHER_TESTS))
    root = tmp_path_factory.mktemp("hostile")
    own = sorted((n for n in wanted if BY_FILE[n].own_process), key=lambda n: not BY_FILE[n].options)
    # One command-line grading in a thread while this thread grades the others in-process
    # (they redirect this process's output, so one at a time): two at once, one per core. The
    # in-process gradings fork their workers from one server, as make test's are forks.
    launch.start_fork_server()
    with contextlib.ExitStack() as stack, ThreadPoolExecutor(max_workers=1) as pool:
        stack.callback(launch.stop_fork_server)
        pending = {name: pool.submit(_grade, BY_FILE[name], root / Path(name).stem) for name in own}
        outcomes = {name: _grade(BY_FILE[name], root / Path(name).stem) for name in wanted if name not in pending}
        outcomes.update({name: future.result() for name, future in pending.items()})
    return outcomes


def _results_text(results: dict) -> str:
    return "\n".join([results.get("output", "")] + [t.get("output", "") for t in results.get("tests", [])])


@pytest.mark.parametrize("case", CASES, ids=[c.file for c in CASES])
def test_hostile_submission_is_graded_honestly(case: Case, graded):
    got = graded[case.file]
    shown = got.stdout + got.stderr
    print(f"{case.file}: {got.seconds:.1f} s, exit {got.returncode}, "
          f"score {got.results and got.results.get('score')}")
    assert "Traceback" not in shown, f"the grader showed a traceback:\n{shown[-3000:]}"
    assert got.results is not None, f"no results file:\n{shown[-3000:]}"
    jsonschema.validate(got.results, SCHEMA)
    assert got.results["extra_data"]["confinement"], "results.json does not name the confinement"
    assert got.results["score"] == case.score, shown[-3000:]
    assert got.results["score"] == sum(t["score"] for t in got.results["tests"])
    assert {t["number"].split(".")[0] for t in got.results["tests"]} == {"1", "2"}
    assert got.returncode == case.exit_code, shown[-3000:]
    for text in case.says:
        assert text in got.stdout, f"the console does not say {text!r}:\n{got.stdout[-3000:]}"
        assert text in _results_text(got.results), f"results.json does not say {text!r}"
    assert got.seconds <= case.seconds, f"grading took {got.seconds:.1f} s"
    assert got.unchanged, "the submitted file was modified"
    assert not got.strays, f"processes left behind: {got.strays}"
    assert len(got.stdout) < 50_000, "the console output is not bounded"


def test_patching_never_beats_a_blank_stub(graded):
    patched, stub = graded["patches_comparisons.py"].results, graded["blank_stub.py"].results
    assert patched["score"] <= stub["score"]
    assert not any(t["score"] for t in patched["tests"])


def test_endless_loop_at_load_is_skipped_and_named(graded):
    got = graded["endless_loop_at_load.ipynb"]
    assert 'cell "while True: # waiting for something":' in got.stdout, got.stdout
    assert "stopped after 3 s (an endless loop?)" in got.stdout and "cell 3" not in got.stdout, got.stdout


def test_exit_in_one_cell_skips_only_that_cell(graded):
    got = graded["exit_in_one_cell.ipynb"]
    assert 'cell "import os":' in got.stdout and "ended the grading process" in got.stdout, got.stdout


@pytest.mark.parametrize("name", ["markup_in_message.py", "skips_escaping.py"])
def test_markup_and_control_codes_stay_text(name, graded):
    got = graded[name]
    shown = got.stdout + json.dumps(got.results, ensure_ascii=False)
    assert not any(c in shown for c in "\x1b\x07\x9b"), shown  # shown as '?': no cleared screen


def test_error_text_is_one_bounded_line(graded):
    """Whatever the worker sends as an error: each stage one line of results.json, no forged line, no 30 MB file."""
    got = graded["long_lines_in_errors.py"]
    assert all(line.startswith("Stage ") for line in got.results["output"].splitlines()), got.results["output"][:3000]
    assert len(json.dumps(got.results)) < 100_000


def test_print_flood_is_truncated(graded):
    got = graded["print_flood.py"]
    assert "debugging line" not in got.stdout  # the student's prints never reach the grader's output
    assert len(json.dumps(got.results)) < 50_000


def _regrade(submission: Path, number: int, times: int) -> list[list[tuple]]:
    """Grade one stage ``times`` times in one worker: the checks, the transport and the worker
    are the real ones; only the worker's start-up is shared. Each regrade finds the worker's
    random generators where the previous one left them."""
    worker = Worker(read_cells(submission), "cpu", Settings())
    try:
        worker.start()
        runs = []
        for _ in range(times):
            worker.begin_stage(number)
            result = run_stage(CHAPTER, stage(number), Submission(worker, stage(number).label))
            runs.append([(c.check.id, c.status, c.score, c.message) for c in result.checks])
        return runs
    finally:
        worker.close()


@pytest.mark.parametrize("name", ["partly_wrong_random.py", "wrong_dtype.py"])
def test_regrading_20_times_gives_identical_scores(name, graded):
    runs = _regrade(HOSTILE / name, 1, times=20)
    assert all(run == runs[0] for run in runs), "a regrade gave another result"
    # ...the same as a fresh grader process from the command line, where stage 1 came first.
    fresh = {t["number"]: t["score"] for t in graded[name].results["tests"] if t["number"].startswith("1.")}
    assert {code: score for code, _, score, _ in runs[0]} == fresh


def test_make_test_front_end(tmp_path):
    """``make test`` on a notebook whose cell 3 ends the process: the other cells earn full marks."""
    notebook = tmp_path / "exit_in_one_cell.ipynb"
    shutil.copyfile(HOSTILE / notebook.name, notebook)
    # -o: never rebuild the virtual environment here, whatever pyproject.toml's timestamp says.
    proc = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.student", "test",
                           f"NOTEBOOK={notebook}", "STAGE=1 2", "DEVICE=cpu"],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env=_environment(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Total: 25/25" in proc.stdout and "ended the grading process" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_make_ci_grade_front_end(tmp_path):
    """``make ci-grade`` on a submission that ends its process at import: graded (exit 0, a low
    score is a grade), a valid results.json with 0 points, and nothing left running."""
    submission = tmp_path / "os_exit_at_import.py"
    shutil.copyfile(HOSTILE / submission.name, submission)
    token = _mark(tmp_path)
    proc = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.student", "ci-grade",
                           f"NOTEBOOK={submission}", f"CI_REPORTS={tmp_path / 'ci'}", "DEVICE=cpu"],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env=_environment(tmp_path), start_new_session=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    data = json.loads((tmp_path / "ci" / "results.json").read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0 and "ended the grading process" in _results_text(data)
    assert not _processes_marked(token)


def test_a_grader_killed_from_outside_leaves_a_valid_zero_and_no_worker(tmp_path):
    """If the grading process itself is killed (a CI timeout, a power user's kill -9), the
    provisional results say 0 points and the worker, stuck in an endless loop, dies with it."""
    token = _mark(tmp_path)
    results = tmp_path / "results.json"
    grader = subprocess.Popen(
        [sys.executable, "-m", "autograder", str(HOSTILE / "endless_loop_in_stage.py"), "--results", str(results),
         "--stage", "1"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=_environment(tmp_path), start_new_session=True)
    try:
        give_up = time.monotonic() + 60
        while not (results.exists() and any(f"(in {token}" in cmd and "forkserver" not in cmd
                                             for cmd in _processes_marked(token).values())):
            assert time.monotonic() < give_up and grader.poll() is None, "grading never started"
            time.sleep(0.2)
        time.sleep(2.0)  # the worker is loading the submission or already looping in stage 1
        grader.kill()
        grader.wait()
        left = _processes_marked(token)
        give_up = time.monotonic() + 5
        while left and time.monotonic() < give_up:
            time.sleep(0.1)
            left = _processes_marked(token)
        assert not left, f"processes outlived the grader: {left}"
    finally:
        for pid in _processes_marked(token):
            os.kill(pid, signal.SIGKILL)
        if grader.poll() is None:
            grader.kill()
    data = json.loads(results.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0 and "did not finish" in data["output"]


def test_a_notebook_that_raises_torchs_thread_count_loses_nothing(tmp_path):
    """A cell that sets torch.set_num_threads(2) and multiplies large matrices starts an
    OpenMP pool in the loaded worker; each stage's copy is pinned back to one thread, so its
    GPT-2-size passes run instead of waiting for pool threads the copy does not have."""
    from autograder.core.engine import grade_notebook_file

    catalog = TESTS / "catalog"
    submission = tmp_path / "threads.py"
    submission.write_text((catalog / "correct" / "book_style.py").read_text()
                          + "\ntorch.set_num_threads(2)\n_big = torch.rand(1500, 1500) @ torch.rand(1500, 1500)\n")
    report = grade_notebook_file(str(submission), CHAPTER, [7], "cpu", Settings(limits=Limits(stage_seconds=30)))
    assert report.score == CHAPTER.points(stage(7)), [(c.check.id, c.message) for c in report.checks]


def test_modules_beside_the_grader_command_do_not_run_in_the_grader(tmp_path):
    """`python -m autograder` run in a student's repository: a torch.py or json.py there is not imported."""
    for name in ("torch", "json", "hypothesis"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('the grader imported a student file')\n")
    shutil.copyfile(SOLUTION, tmp_path / "ch03_attention.ipynb")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "ch03_attention.ipynb", "--stage", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "imported a student file" not in proc.stdout + proc.stderr
    assert "Total: 10/10" in proc.stdout


def test_student_code_runs_with_the_garbage_collector_on(tmp_path):
    """The grader imports with its collector off (__main__.py); the worker, at load and in each
    stage's copy, collects as usual, so cyclic garbage cannot pile up to the memory limit."""
    submission = tmp_path / "collector.py"
    submission.write_text((TESTS / "catalog" / "correct" / "book_style.py").read_text() + """
import gc
_softmax, _collecting_at_load = softmax_naive, gc.isenabled()


def softmax_naive(x):
    return _softmax(x) if _collecting_at_load and gc.isenabled() else _softmax(x) * 0
""")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(submission), "--stage", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "Total: 10/10" in proc.stdout, proc.stdout + proc.stderr
