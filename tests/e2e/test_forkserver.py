"""Issue 11: workers forked from the preloaded server (make autograde's pool workers) are the
same workers as fresh ones: the same fences, the same grades, nothing of the server in reach,
and nothing left running afterwards."""

from __future__ import annotations

import contextlib
import os
import time

import pytest
from support import REPO, SOLUTION

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.engine import grade_notebook_file
from autograder.frontends.instructors.nbgrader.stages import grade_and_end_strays
from autograder.sandbox import forkserver, launch, oslayer, strays
from autograder.sandbox.confinement import is_confined
from autograder.sandbox.loader import Cell
from autograder.sandbox.settings import Settings
from autograder.sandbox.worker import Worker

pytestmark = pytest.mark.skipif(not forkserver.available(), reason="the fork server needs Linux (fork, pidfds)")

HOSTILE = REPO / "tests" / "hostile"


@pytest.fixture(scope="module", autouse=True)
def _stopped_at_the_end():
    yield
    launch.stop_fork_server()


@pytest.fixture
def fork_server():
    """The running server (started once for this file, again after a test stopped it)."""
    assert launch.start_fork_server(), "the fork server did not start"
    return launch.fork_server


@contextlib.contextmanager
def fresh_workers():
    """Workers start as ``python -I`` meanwhile, as they do where no server runs."""
    server, launch.fork_server = launch.fork_server, None
    try:
        yield
    finally:
        launch.fork_server = server


def _outcome(report) -> list[tuple]:
    return [(c.check.id, c.status.name, c.message, str(c.hint)) for c in report.checks]


@pytest.mark.parametrize("name", ["kills_grader.py", "exits_inside_stages.py", "reads_solutions.py",
                                  "partly_wrong_random.py"])
def test_a_forked_worker_grades_exactly_as_a_fresh_one(name, fork_server, tmp_path):
    """Hostile and honest files, stages 1 and 2: the same checks, messages and hints either way."""
    path = tmp_path / name
    path.write_bytes((HOSTILE / name).read_bytes())
    with fresh_workers():
        fresh = grade_notebook_file(str(path), CHAPTER, [1, 2])
    forked = grade_notebook_file(str(path), CHAPTER, [1, 2])
    assert launch.fork_server is fork_server and fork_server.alive, "the server stopped"
    assert _outcome(forked) == _outcome(fresh)
    assert forked.confinement == fresh.confinement and is_confined(forked.confinement)


def test_the_solution_earns_full_marks_from_a_forked_worker(fork_server):
    report = grade_notebook_file(str(SOLUTION), CHAPTER)
    bonus = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)  # the course's: none once its section is deleted
    assert report.score == report.max_score == CHAPTER.max_score and report.bonus_score == report.bonus_max_score == bonus, \
        [(c.check.id, c.message) for c in report.checks if c.status.name != "PASSED"]


PROBE = '''
import os, signal

def open_descriptors():
    found = []
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return found

def parent_ids():
    import json
    return [os.getppid(), json.loads(os.environ.get("AUTOGRADER_WORKER", "{}")).get("grader_pid", 0)]

def signal_the_server():
    try:
        os.kill(os.getppid(), signal.SIGSTOP)
        return "done"
    except OSError as exc:
        return type(exc).__name__

def start_daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import time
            time.sleep(600)
        os._exit(0)
    os.wait()
    return "started"
'''


def _call(worker: Worker, name: str):
    return worker.request({"op": "call", "name": name, "args": []})["ok"]["repr"]


def test_a_forked_worker_holds_nothing_of_the_server(fork_server):
    worker = Worker([Cell(1, PROBE, "probe.py")], "cpu", Settings())
    try:
        worker.start()
        assert isinstance(worker.proc, forkserver.ForkedProcess)
        assert is_confined(worker.confinement), worker.confinement
        worker.begin_stage(1)
        descriptors = _call(worker, "open_descriptors")
        # The server's control socket (which could ask for more forks) is closed in the fork;
        # what is open is the worker's own: /dev/null, its pipes, its stderr file.
        assert "socket:" not in descriptors, descriptors
        assert _call(worker, "parent_ids") != "[0, 0]"
        assert _call(worker, "signal_the_server") == "'PermissionError'"
    finally:
        worker.close()
    assert fork_server.alive, "a worker stopped the fork server"


def test_a_daemon_started_by_a_forked_worker_is_ended(fork_server, tmp_path):
    """make autograde's pool worker is a subreaper: the daemon of a forked worker is re-parented
    to it (the server is not one) and ended with the grading."""
    notebook = tmp_path / "daemon.py"
    notebook.write_text(PROBE + "\nstart_daemon()\n")
    oslayer.become_subreaper()
    before = strays.children_of(os.getpid())
    grade_and_end_strays(str(notebook), CHAPTER, [1], {}, "cpu", Settings())
    time.sleep(0.2)
    left = strays.children_of(os.getpid()) - before
    assert left <= {fork_server.pid}, f"processes left behind: {left}"
    assert fork_server.alive


def test_a_forked_worker_starts_faster_than_a_fresh_one(fork_server):
    def start_seconds() -> float:
        worker = Worker([Cell(1, "import torch\n", "imports.py")], "cpu", Settings())
        started = time.monotonic()
        try:
            worker.start()
            return time.monotonic() - started
        finally:
            worker.close()

    forked = min(start_seconds() for _ in range(2))
    with fresh_workers():
        fresh = start_seconds()
    print(f"worker ready with the notebook loaded: forked {forked:.2f} s, fresh {fresh:.2f} s")
    assert forked < fresh / 2, (forked, fresh)


def test_workers_start_afresh_when_the_server_is_gone(fork_server):
    fork_server.close()  # as if it had died
    worker = Worker([Cell(1, "x = 1\n", "one.py")], "cpu", Settings())
    try:
        worker.start()
        assert not isinstance(worker.proc, forkserver.ForkedProcess)
    finally:
        worker.close()
    assert launch.fork_server is None
