"""Issue 11: the worker's fences, what the reports say about them, and the time bounds.

The probes run in the real worker (Worker + the same requests the checks use). Each attack
is tried twice: with the fences, where it must fail, and with them switched off by the tests'
setting (Settings.fences), where the same probe must succeed; so a probe that could not have
worked anyway proves nothing and fails the test.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from support import REPO, SOLUTION

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.engine import grade_notebook_file
from autograder.sandbox import confinement
from autograder.sandbox.forkserver import ForkedProcess
from autograder.sandbox.loader import Cell
from autograder.sandbox.settings import SOURCES, Limits, Settings
from autograder.sandbox.worker import Worker

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fences are Linux's")
SECRET = "AUTOGRADER_TEST_SECRET_TOKEN"
REQUIRE_CONFINEMENT, PORTABLE = SOURCES["require_confinement"][1], SOURCES["portable"][1]
UNFENCED = Settings(fences=False)


def _fenced_here() -> bool:
    """Landlock and seccomp on this kernel (the tests that need them are skipped elsewhere)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(444, None, 0, 1) >= 1


needs_landlock = pytest.mark.skipif(not _fenced_here(), reason="this kernel has no Landlock")

PROBES = f'''
import fcntl, json, os, socket, sqlite3, sys, termios

REPO = {str(REPO)!r}
SITE = {sysconfig.get_paths()["purelib"]!r}

def _try(action):
    try:
        action()
        return "done"
    except BaseException as exc:
        return type(exc).__name__

def read_solutions():
    open(REPO + "/solutions/ch03_attention/ch03_attention.ipynb").read()

def read_tests():
    open(REPO + "/tests/conftest.py").read()

def read_grader_reference():
    open(REPO + "/autograder/chapters/ch03_attention/reference.py").read()

def import_reference():
    for name in [m for m in sys.modules if m.startswith("autograder.chapters")]:
        del sys.modules[name]
    import autograder.chapters.ch03_attention.reference  # noqa: F401

def list_repository():
    os.listdir(REPO)

def read_home():
    os.listdir({str(Path.home())!r})

def open_gradebook():
    sqlite3.connect(REPO + "/grading/gradebook.db").execute("create table if not exists probe(x)")

def write_venv():
    path = os.path.join(SITE, "zz_probe_{os.getpid()}.pth")
    open(path, "w").close()
    os.unlink(path)

def tcp_connect():
    socket.create_connection(("127.0.0.1", {{port}}), timeout=2).close()

def write_font_cache():  # the font list every grading reads (launch.matplotlib_cache)
    path = os.path.join(os.environ["MPLCONFIGDIR"], "fontlist-probe.json")
    open(path, "w").close()
    os.unlink(path)

def write_dev_shm():
    path = "/dev/shm/autograder-probe-{os.getpid()}"
    open(path, "w").close()
    os.unlink(path)

def set_owner():
    r, w = os.pipe()
    fcntl.fcntl(r, fcntl.F_SETOWN, os.getppid())

def set_signal():
    r, w = os.pipe()
    fcntl.fcntl(r, 10, 9)  # F_SETSIG

def ioctl_owner():
    a, b = socket.socketpair()
    fcntl.ioctl(a.fileno(), 0x8901, os.getpid().to_bytes(4, sys.byteorder))  # FIOSETOWN

def grader_environment():
    if {SECRET!r} not in open("/proc/%d/environ" % os.getppid(), "rb").read().decode():
        raise LookupError("not there")

def init_environment():  # pid 1: the container's or the machine's first process
    if not open("/proc/1/environ", "rb").read():
        raise LookupError("empty")

def grader_parent_environment():  # the process that started the grader (a shell, nbgrader, make)
    if not open("/proc/%d/environ" % _grader_parent(), "rb").read():
        raise LookupError("empty")

def own_environment():
    if {SECRET!r} not in os.environ:
        raise LookupError("not passed on")

def _grader_parent():
    grader = json.loads(os.environ["AUTOGRADER_WORKER"])["grader_pid"]
    return int(open("/proc/%d/stat" % grader).read().rsplit(")", 1)[1].split()[1])

def list_processes():  # any process but this stage's copy and the loaded worker it was forked from
    if not [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (os.getpid(), os.getppid())]:
        raise LookupError("none")

def grader_cmdline():
    if not open("/proc/%d/cmdline" % json.loads(os.environ["AUTOGRADER_WORKER"])["grader_pid"], "rb").read():
        raise LookupError("empty")

def grader_parent_cmdline():
    if not open("/proc/%d/cmdline" % _grader_parent(), "rb").read():
        raise LookupError("empty")

def init_cmdline():
    if not open("/proc/1/cmdline", "rb").read():
        raise LookupError("empty")

def own_proc():  # what PyTorch reads
    for path in ("/proc/self/status", "/proc/self/maps", "/proc/%d/stat" % os.getpid(), "/proc/cpuinfo",
                 "/proc/meminfo"):
        if not open(path, "rb").read():
            raise LookupError(path)

def write_scratch():
    open("scratch.txt", "w").write("allowed")

def import_numpy():
    import numpy  # noqa: F401

def probe(name):
    return _try(globals()[name])
'''

ATTACKS = ["read_solutions", "read_tests", "read_grader_reference", "import_reference", "list_repository",
           "read_home", "write_venv", "write_font_cache", "tcp_connect", "write_dev_shm", "set_owner", "set_signal", "ioctl_owner",
           "grader_environment", "init_environment", "grader_parent_environment", "own_environment"]
# The process list: fenced where the worker can mount a private /proc (root; confinement._private_proc)
PROCESS_ATTACKS = ["list_processes", "grader_cmdline", "grader_parent_cmdline", "init_cmdline"]
ALLOWED = ["write_scratch", "import_numpy", "own_proc"]


@pytest.fixture(scope="module")
def listener():
    """A TCP server on 127.0.0.1 that accepts: a connect from the worker would succeed."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _readable(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return bool(handle.read())
    except OSError:
        return False


def _probe_all(port: int, fences_off: bool, forked: bool = False) -> tuple[dict[str, str], dict]:
    source = PROBES.replace("{port}", str(port))
    with mock.patch.dict(os.environ, {SECRET: "1"}):
        worker = Worker([Cell(1, source, "probes.py")], "cpu", UNFENCED if fences_off else Settings())
        try:
            loaded = worker.start()
            assert isinstance(worker.proc, ForkedProcess) == forked
            assert loaded[0]["status"] == "ok", loaded
            worker.begin_stage(1)
            answers = {}
            for name in ATTACKS + PROCESS_ATTACKS + ALLOWED:
                answer = worker.request({"op": "call", "name": "probe", "args": [name]})
                answers[name] = answer["ok"]["repr"].strip("'")
            return answers, worker.confinement
        finally:
            worker.close()


@needs_landlock
@pytest.mark.parametrize("start", ["fresh", "forked"])
def test_every_attack_fails_in_the_worker_and_works_without_the_fences(start, listener, tmp_path):
    """``forked``: the worker is a fork of the preloaded server (make autograde's pool workers)."""
    from autograder.sandbox import forkserver, launch

    if start == "forked":
        if not forkserver.available():
            pytest.skip("no fork server here")
        assert launch.start_fork_server()
    else:
        launch.stop_fork_server()  # the e2e tests' server (conftest.py): this worker starts afresh
    try:
        _attacks_fail_only_with_fences(listener, forked=start == "forked")
    finally:
        launch.stop_fork_server()


def _attacks_fail_only_with_fences(listener, forked: bool) -> None:
    gradebook = REPO / "grading" / "gradebook.db"
    made_grading = not (REPO / "grading").exists()
    existed = gradebook.exists()
    (REPO / "grading").mkdir(exist_ok=True)
    try:
        fenced, fences = _probe_all(listener, fences_off=False, forked=forked)
        open_answers = _probe_all(listener, fences_off=True, forked=forked)[0]
    finally:
        if not existed and gradebook.exists():
            gradebook.unlink()
        if made_grading:
            (REPO / "grading").rmdir()
    assert confinement.is_confined(fences), fences
    print(json.dumps({"fenced": fenced, "unfenced": open_answers}, indent=1))
    for name in ATTACKS:
        assert fenced[name] != "done", f"{name} succeeded inside the fences"
    for name in ATTACKS:
        if name in ("grader_environment", "own_environment"):
            continue  # the environment is kept minimal with or without the fences
        if name == "init_environment" and not _readable("/proc/1/environ"):
            continue  # pid 1 is out of this test's own reach (a container's): nothing to show here
        assert open_answers[name] == "done", f"{name} would fail even without the fences: the probe proves nothing"
    assert fenced["tcp_connect"] == "PermissionError" and fenced["read_solutions"] == "PermissionError"
    for name in PROCESS_ATTACKS:
        assert open_answers[name] == "done", f"{name} would fail even without the fences: the probe proves nothing"
        if os.geteuid() == 0:
            assert fenced[name] in ("FileNotFoundError", "LookupError"), f"{name}: {fenced[name]} inside the fences"
    assert fences["processes"] == (os.geteuid() == 0), fences
    assert ("/proc: its own processes only" if os.geteuid() == 0 else "/proc: other processes visible") \
        in confinement.describe(fences)
    for name in ALLOWED:
        assert fenced[name] == "done", f"{name} should still work: {fenced[name]}"


def test_the_worker_sees_a_minimal_environment():
    names = ("GITHUB_TOKEN", SECRET, "PATH")
    with mock.patch.dict(os.environ, {SECRET: "1", "GITHUB_TOKEN": "ghp_secret"}):
        worker = Worker([Cell(1, "import os\ndef has(name):\n    return name in os.environ\n", "env.py")],
                        "cpu", Settings())
        try:
            worker.start()
            worker.begin_stage(1)
            seen = {n: worker.request({"op": "call", "name": "has", "args": [n]})["ok"]["repr"] for n in names}
        finally:
            worker.close()
    assert seen == {"GITHUB_TOKEN": "False", SECRET: "False", "PATH": "True"}


def _documented_environment() -> tuple[set[str], tuple[str, ...]]:
    """The names (and NAME_* prefixes) docs/security.md's fences table gives the worker's environment."""
    row = next(line for line in (REPO / "docs" / "security.md").read_text().splitlines()
               if line.startswith("| environment |"))
    names = set(re.findall(r"`([A-Z][A-Z0-9_]*\*?)`", row))
    return {n for n in names if not n.endswith("*")}, tuple(n[:-1] for n in names if n.endswith("*"))


def test_the_worker_environment_is_the_one_security_md_lists():
    names, prefixes = _documented_environment()
    with mock.patch.dict(os.environ, {SECRET: "1", "LC_ALL": "C.UTF-8", "CUDA_HOME": "/nowhere"}):
        source = "import os\ndef name(i):\n    return ([*sorted(os.environ), ''])[min(i, len(os.environ))]\n"
        worker = Worker([Cell(1, source, "env.py")], "cpu", Settings())
        try:
            worker.start()
            worker.begin_stage(1)
            seen = []  # one name per request: a reply's repr is shortened
            while not seen or seen[-1]:
                seen.append(worker.request({"op": "call", "name": "name", "args": [len(seen)]})["ok"]["repr"].strip("'"))
            seen.pop()
        finally:
            worker.close()
    undocumented = [n for n in seen if n not in names and not n.startswith(prefixes)]
    assert not undocumented, f"the worker's environment holds {undocumented}, which docs/security.md does not list"
    assert {"HOME", "PATH", "AUTOGRADER_WORKER", "LC_ALL", "CUDA_HOME"} <= set(seen)


@needs_landlock
def test_reports_name_the_fences(tmp_path):
    """results.json and JUnit: the fences in force, or 'unconfined'; the console only with -v:
    a student need not read them on every run."""
    submission = REPO / "tests" / "hostile" / "blank_stub.py"
    proc = subprocess.run([sys.executable, "-m", "autograder", "ci", str(submission), "--stage", "1",
                           "--results", str(tmp_path / "results.json"), "--junit", str(tmp_path / "junit.xml")],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "COLUMNS": "300"})
    data = json.loads((tmp_path / "results.json").read_text())
    words = data["extra_data"]["confinement"]
    assert "landlock" in words and "seccomp" in words and "unconfined" not in words
    assert "confinement:" not in proc.stdout, proc.stdout
    assert f'name="confinement" value="{words}"' in (tmp_path / "junit.xml").read_text()


LEAK_PROBE = """
import ctypes, hashlib, os, posix, re, sys
import torch

def _secret(data):  # the test's secret value, known to this cell by its hash alone
    return any(hashlib.sha256(m.group(0)).hexdigest() == {digest!r}
               for m in re.finditer(rb"leak-[0-9a-f]{{32}}", data))

def _memory():  # every writable region of this process (the heap, the stack and its environment block)
    for line in open("/proc/self/maps"):
        fields = line.split()
        span, perms, path = fields[0], fields[1], fields[5] if len(fields) > 5 else ""
        if perms.startswith("rw") and not path.startswith(("[vvar", "[vsys")):
            start, end = (int(x, 16) for x in span.split("-"))
            yield (ctypes.c_char * (end - start)).from_address(start)

FOUND = [where for where, data in [
    ("/proc/self/environ", open("/proc/self/environ", "rb").read()),
    ("posix.environ", b" ".join(v for v in posix.environ.values())),
    ("os.environ", " ".join(os.environ.values()).encode())] if _secret(data)]
FOUND += ["memory"] if any(_secret(region) for region in _memory()) else []
if "autograder.frontends.students.cli" not in sys.modules:
    raise LookupError("this worker is no fork of the grading process")
if FOUND:
    raise LookupError(f"the secret is in {{FOUND}}")

def softmax_naive(x):  # full marks for stage 1 only when the grader's secret is nowhere
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
"""


@pytest.mark.parametrize("front_end", ["grade", "ci"])
def test_a_worker_forked_from_the_grader_holds_none_of_its_secrets(front_end, tmp_path):
    """``python -m autograder`` forks its workers' server from itself after importing torch: it
    first starts again with the few variables it needs, so a token in the caller's environment is
    neither in the worker's environment nor anywhere in its memory."""
    import hashlib
    import uuid

    import nbformat

    value = f"leak-{uuid.uuid4().hex}"
    notebook = tmp_path / "leak.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        LEAK_PROBE.format(digest=hashlib.sha256(value.encode()).hexdigest()))]), notebook)
    proc = subprocess.run([sys.executable, "-m", "autograder", front_end, str(notebook), "--stage", "1", "--device",
                           "cpu", "--results", str(tmp_path / "results.json")], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, SECRET: value, "GITHUB_TOKEN": value})
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["score"] == CHAPTER.points(CHAPTER.stages[0]), proc.stdout + data.get("output", "")


@pytest.mark.parametrize("front_end", ["cli", "ci"])
def test_required_confinement_refuses_an_unfenced_worker(front_end, tmp_path):
    """A worker without fences (the portable path's): with AUTOGRADER_REQUIRE_CONFINEMENT=1 nothing
    is graded, exit 2, the reason on the console and in results.json, which says 'unconfined'."""
    command = ["autograder"] if front_end == "cli" else ["autograder", "ci"]
    marker = tmp_path / "ran"
    submission = tmp_path / "submission.py"
    submission.write_text(f"open({str(marker)!r}, 'w').close()\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "COLUMNS": "300",
           PORTABLE: "1", REQUIRE_CONFINEMENT: "1"}
    proc = subprocess.run([sys.executable, "-m", *command, str(submission), "--stage", "1",
                           "--results", str(tmp_path / "results.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["score"] == 0 and data["extra_data"]["confinement"].startswith("unconfined")
    assert "refusing to run the submission without its fences" in " ".join(proc.stdout.split())
    assert not marker.exists(), "the submission ran although the grading was refused"
    # ...and without the requirement the same unfenced grading goes on, and says so
    env.pop(REQUIRE_CONFINEMENT)
    proc = subprocess.run([sys.executable, "-m", *command, str(submission), "--stage", "1",
                           "--results", str(tmp_path / "results.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == (1 if front_end == "cli" else 0) and marker.exists()  # ci: a low score is a grade
    assert json.loads((tmp_path / "results.json").read_text())["extra_data"]["confinement"].startswith("unconfined")


def test_slow_cells_run_once_whatever_the_stages_do(tmp_path):
    """Three cells that each take 0.9x the cell limit, then stages that end their process or
    run out of time: graded in under 5x the cell limit, which only one load can do (each
    reload would run the three cells again: 2.7x the limit each time)."""
    cell_limit = 12.0  # long enough that the start-up of a busy machine stays small beside it
    import nbformat

    cells = [nbformat.v4.new_code_cell(f"import time\ntime.sleep({0.9 * cell_limit})") for _ in range(3)]
    cells.append(nbformat.v4.new_code_cell(textwrap.dedent("""
        import os
        def softmax_naive(x):
            os._exit(1)
        def compute_attn_scores(inputs):
            while True:
                time.sleep(1)
        """)))
    path = tmp_path / "slow.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    started = time.monotonic()
    report = grade_notebook_file(str(path), CHAPTER, [1, 2, 3], "cpu",
                                 Settings(limits=Limits(cell_seconds=cell_limit, stage_seconds=3.0)))
    seconds = time.monotonic() - started
    by_stage = {s.stage.number: s for s in report.stages}
    assert "ended the grading process" in by_stage[1].checks[0].message, by_stage[1].checks[0].message
    assert "stopped after 3 s" in by_stage[2].checks[0].message, by_stage[2].checks[0].message
    assert by_stage[3].status.name == "NOT_IMPLEMENTED" or "not defined" in by_stage[3].checks[0].message
    assert seconds < 5 * cell_limit, f"graded in {seconds:.1f} s"


def test_an_endless_loop_in_causal_attention_costs_stage_4_only(tmp_path):
    """Issue 46: the later cells that would loop again are skipped at once, and stage 5 is graded
    with the book's CausalAttention, not left to wait out its own time limit."""
    limit = 15.0
    notebook = json.loads(SOLUTION.read_text())
    cell = next(c for c in notebook["cells"] if "".join(c["source"]).startswith("class CausalAttention"))
    source = "".join(cell["source"])
    cell["source"] = source.replace("    def forward(self, x):\n", "    def forward(self, x):\n        while True:\n"
                                    "            pass\n", 1)
    assert cell["source"] != source
    path = tmp_path / "ch03_attention.ipynb"
    path.write_text(json.dumps(notebook))
    started = time.monotonic()
    report = grade_notebook_file(str(path), CHAPTER, None, "cpu",
                                 Settings(limits=Limits(cell_seconds=limit, stage_seconds=limit)))
    seconds = time.monotonic() - started
    skipped = [c for c in report.cells if "skipped: it uses MultiHeadAttentionWrapper, which uses CausalAttention"
               in str(c.get("error", {}).get("message"))]
    assert len(skipped) == 3, report.cells  # the wrapper's three example cells
    by_stage = {s.stage.number: s for s in report.stages}
    assert by_stage[4].score == 0 and "the time limit of a stage" in by_stage[4].checks[0].message
    assert by_stage[5].score == by_stage[5].max_score, [c.message for c in by_stage[5].checks]
    assert any("yours ran past the time limit in stage 4" in note for note in by_stage[5].notes), by_stage[5].notes
    assert all(by_stage[n].score == by_stage[n].max_score for n in (1, 2, 3, 6, 7))
    # one cell limit and one stage limit, not one per later cell and stage 5's too
    assert seconds < 2 * limit + 50, f"graded in {seconds:.1f} s"


def test_the_overall_deadline_bounds_a_grading(tmp_path):
    """Cells just under the cell limit, more of them than the overall limit allows: the
    grading stops at the overall limit with a reason, never later."""
    path = tmp_path / "many_slow_cells.py"
    cells = "\n".join(f"# cell {i}\nimport time\ntime.sleep(1.8)" for i in range(10))
    path.write_text(cells)
    limits = Limits(cell_seconds=2.0, stage_seconds=2.0, total_seconds=6.0)
    started = time.monotonic()
    report = grade_notebook_file(str(path), CHAPTER, [1], "cpu", Settings(limits=limits))
    seconds = time.monotonic() - started
    assert seconds < 6.0 + 5.0, seconds  # the limit, and the worker's start and end
    assert report.exit_code in (1, 2) and report.score == 0


def test_nothing_is_imported_by_the_grader_after_student_code_starts(tmp_path):
    """With the fences off (as on a kernel without Landlock), a submission could rewrite a
    module file the grader has not imported yet: so the grader imports everything first."""
    script = tmp_path / "imports.py"
    script.write_text(textwrap.dedent(f"""
        import dataclasses, sys
        from autograder.sandbox import worker
        from autograder.sandbox.settings import Settings
        read = Settings.read
        Settings.read = lambda **limits: dataclasses.replace(read(**limits), fences=False)
        seen = {{}}
        original = worker.Worker._send
        def send(self, obj, deadline):
            if isinstance(obj, dict) and obj.get("op") == "load_submission":
                seen.setdefault("before", set(sys.modules))
            return original(self, obj, deadline)
        worker.Worker._send = send
        from autograder.frontends import commands
        commands.main(["ci", sys.argv[1], "--results", {str(tmp_path / 'r.json')!r}, "--junit", {str(tmp_path / 'j.xml')!r},
                 "--summary", {str(tmp_path / 's.md')!r}])
        print("LATE IMPORTS:", sorted(set(sys.modules) - seen["before"]))
    """))
    for submission in (REPO / "tests" / "hostile" / "partly_wrong_random.py", REPO / "tests" / "hostile" / "blank_stub.py"):
        proc = subprocess.run([sys.executable, str(script), str(submission)], cwd=REPO, capture_output=True, text=True,
                              timeout=300, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
        assert "LATE IMPORTS: []" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


FILL = '''
import os, time

def fill(files):
    for i in range(files):
        with open(f"fill{i}.bin", "wb") as handle:
            handle.write(os.urandom(1 << 20) * 8)  # 8 MiB of data, not a sparse hole
        time.sleep(0.01)
    return "done"
'''


def test_the_scratch_folder_has_a_total_size():
    """Each file may hold 1 GiB (RLIMIT_FSIZE); all of them together the scratch limit: past it
    the stage's process ends with the reason, its files go, and the next stage still runs."""
    from autograder.core.failures import StageAborted

    worker = Worker([Cell(1, FILL, "fill.py")], "cpu", Settings(limits=Limits(scratch_bytes=48 * 2**20)))
    try:
        worker.start()
        worker.begin_stage(1)
        with pytest.raises(StageAborted) as stopped:
            worker.request({"op": "call", "name": "fill", "args": [400]})  # 3.2 GiB unless stopped
        assert "wrote more than 0.046875 GiB of files" in stopped.value.message, stopped.value.message
        worker.end_stage()
        worker.begin_stage(2)  # the loaded worker stayed
        assert worker.request({"op": "call", "name": "fill", "args": [2]})["ok"]["repr"] == "'done'"
    finally:
        worker.close()


def test_a_cell_that_fills_the_scratch_folder_is_skipped():
    cells = [Cell(1, FILL, "fill.py"), Cell(2, "fill(400)\n", "big.py"), Cell(3, "after = 1\n", "after.py")]
    worker = Worker(cells, "cpu", Settings(limits=Limits(scratch_bytes=48 * 2**20)))
    try:
        loaded = worker.start()
    finally:
        worker.close()
    by_index = {c["index"]: c for c in loaded}
    assert by_index[2]["status"] == "error" and "wrote more than" in by_index[2]["error"]["message"], by_index[2]
    assert by_index[1]["status"] == by_index[3]["status"] == "ok"


LIAR = '''
import os
_grader = os.getppid()  # in the loaded worker: the grading process (or the fork server)
os.getpid = {fake}  # what the stage's copy will report as its pid
'''
GRADE_A_LIAR = '''
import sys
from autograder.core.failures import StageAborted
from autograder.sandbox.settings import Settings
from autograder.sandbox.worker import Worker
from autograder.sandbox.loader import Cell

worker = Worker([Cell(1, sys.argv[1], "liar.py")], "cpu", Settings())
try:
    for stage in (1, 2):
        if not worker.alive:  # as the engine does: the first stage, or after the worker was ended
            worker.start()
        worker.begin_stage(stage)
        try:
            worker.request({{"op": "call", "name": "len", "args": [[1, 2]]}})
            print("answered")
        except StageAborted as exc:
            print("aborted:", exc.message)
        worker.end_stage()
finally:
    worker.close()
print("grader alive")
'''


@pytest.mark.parametrize("fake", ["lambda: _grader", "lambda: 0", "lambda: os.getppid()"],
                         ids=["the grader", "pid 0", "the loaded worker"])
def test_a_worker_that_lies_about_its_stage_pid_harms_nobody(fake):
    """The loaded worker names its stage's copy after student code ran in it: a pid that is
    not a copy of it in a group of its own (the grader's, 0: the grader's group, the loaded
    worker itself) is never signalled, and the stage says why it got nothing. The grading
    runs in a session of its own, so a regression kills that process, not the test run."""
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
                           + GRADE_A_LIAR.replace("{{", "{").replace("}}", "}"), LIAR.format(fake=fake)],
                          capture_output=True, text=True, timeout=300, start_new_session=True)
    assert done.returncode == 0 and done.stdout.endswith("grader alive\n"), (done.returncode, done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert lines[:2] == ["aborted: the grading process named a process that is not its stage's copy"] * 2, lines


def _budget_here():
    from autograder.sandbox.cgroups import Budget

    budget = Budget(256 * 2**20, 16)
    made = {"memory", "pids"} <= set(budget.held)
    budget.close()
    return made


needs_cgroups = pytest.mark.skipif(not sys.platform.startswith("linux") or not _budget_here(),
                                   reason="no control group with a memory and a task limit can be made here (no "
                                          "cgroup file system, or not root and nothing delegated): the "
                                          "per-process limits stand alone")

FORK_MANY = '''
import os, time

def fork_many(n):
    started = 0
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        started += 1
    return started
'''


@needs_cgroups
def test_one_process_limit_for_the_worker_and_all_it_starts_root_included():
    """RLIMIT_NPROC exempts root; the worker's control group does not: a fork bomb stops at the
    group's task limit, every process it made ends with the worker, and the reports say so."""
    from autograder.sandbox.cgroups import TASKS

    worker = Worker([Cell(1, FORK_MANY, "forks.py")], "cpu", Settings())
    try:
        worker.start()
        assert f"{TASKS} tasks" in confinement.describe(worker.confinement), worker.confinement
        groups = list(worker._budget.groups)
        worker.begin_stage(1)
        started = int(worker.request({"op": "call", "name": "fork_many", "args": [400]})["ok"]["repr"])
        assert 0 < started < TASKS, started
        assert len(worker._budget.members()) > started  # the sleepers are still there, inside
    finally:
        worker.close()
    assert not any(group.exists() for group in groups), "the worker's groups outlived it"


@needs_cgroups
def test_one_memory_budget_for_a_process_and_its_children():
    """Two children that each stay under the budget but not together: the group's budget ends
    one of them (a per-process limit would let both through)."""
    from autograder.sandbox.cgroups import Budget

    budget = Budget(256 * 2**20)
    code = textwrap.dedent("""
        import os, sys, time
        pids = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                block = bytearray(200 * 2**20)  # written: resident, not just reserved
                time.sleep(2)
                os._exit(0)
            pids.append(pid)
        statuses = [os.waitpid(pid, 0)[1] for pid in pids]
        print(sum(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses))
    """)
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-c", "import sys; sys.stdin.readline()\n" + code],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert budget.add(proc.pid)
        out, _ = proc.communicate("go\n", timeout=60)
    finally:
        budget.close()
    assert out.strip() == "1", out


@needs_cgroups
def test_a_process_the_worker_did_not_start_is_put_back_not_ended():
    """Without Landlock a root worker could write another pid (the grader's, pid 1) into its
    group: closing the group ends only the worker's processes and hands any other back."""
    from autograder.sandbox.cgroups import Budget

    budget = Budget(256 * 2**20)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert budget.add(bystander.pid) and bystander.pid in budget.members()
        budget.close(belongs=lambda pid: False)
        assert budget.groups == [] and bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


CMDLINE_PROBE = """
import glob
import torch

def _on_a_command_line(text):
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            if text in open(path, "rb").read().decode(errors="replace"):
                return True
        except OSError:
            pass
    return False

if _on_a_command_line({look_for!r}):  # full marks for stage 1 only when it found what it looks for
    def softmax_naive(x):
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
"""
HIDDEN_SEED = 918273645


ROOT = os.geteuid() == 0


@pytest.mark.parametrize(("look_for", "fences_off", "found"), [
    (str(HIDDEN_SEED), False, False),  # the hidden examples' seed is on no command line (issue 35)
    (str(HIDDEN_SEED), True, False),  # nor is it without the fences
    # The grading process's command line: hidden where the worker has a private /proc (root)
    ("stage-grades", False, not ROOT),
    ("stage-grades", True, True),  # the probe can read command lines: its 0s mean something
])
def test_a_submission_cannot_read_the_hidden_seed_from_any_command_line(look_for, fences_off, found, tmp_path):
    """nbgrader's SandboxExecute grades through a subprocess; the seed it passes must not be
    where /proc/<pid>/cmdline shows it to the submission (it goes on a pipe)."""
    import nbformat

    from autograder.frontends.instructors.nbgrader.execute import SandboxExecute

    notebook = tmp_path / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CMDLINE_PROBE.format(look_for=look_for))]),
                   notebook)
    # the grading subprocess reads its settings: without fences is the portable path there
    with mock.patch.dict(os.environ, {PORTABLE: "1" if fences_off else "0"}):
        result = SandboxExecute().grade_file(notebook, CHAPTER, [1], {1: HIDDEN_SEED})
    stage = CHAPTER.stages[0]
    assert result["stages"]["1"]["score"] == (CHAPTER.points(stage) if found else 0), result["stages"]["1"]["text"]


PROC_PROBE = """
import json
import os
import torch

def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""

def _others():
    \"\"\"Whatever this notebook can see of another process: the grader's, its parent's, pid 1's.\"\"\"
    seen = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    grader = str(json.loads(os.environ.get("AUTOGRADER_WORKER", "{{}}")).get("grader_pid", ""))
    stat = _read(f"/proc/{{grader}}/stat").decode(errors="replace")
    parent = stat.rsplit(")", 1)[1].split()[1] if ")" in stat else ""
    for pid in {{grader, str(os.getppid()), parent, "1"}} - {{""}}:
        seen += [name for name in ("cmdline", "environ", "status") if _read(f"/proc/{{pid}}/{{name}}")]
    return seen

_own = all(_read(p) for p in ("/proc/self/status", "/proc/self/maps", "/proc/cpuinfo"))
if _own and bool(_others()) == {expect_leak}:  # full marks for stage 1 only when it saw what the case expects
    def softmax_naive(x):
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
"""


@pytest.mark.skipif(not ROOT, reason="a private /proc needs root: as a user the report says 'other processes visible'")
@needs_landlock
@pytest.mark.parametrize("fences_off", [False, True])
def test_a_submission_sees_no_other_process(fences_off, tmp_path):
    """Issue 35: a notebook that lists /proc and reads the cmdline, environ and status of the
    grader, its parent, the worker's parent and pid 1 gets full marks only when what it saw is
    what the case expects: nothing with the fences (and /proc/self still works), something
    without them (so the probe can see, and its full marks above mean it saw nothing)."""
    path = tmp_path / "proc.ipynb"
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        PROC_PROBE.format(expect_leak=fences_off))]), path)
    report = grade_notebook_file(str(path), CHAPTER, [1], "cpu", UNFENCED if fences_off else Settings())
    assert report.stages[0].score == CHAPTER.points(CHAPTER.stages[0]), report.stages[0].checks
    assert bool(report.confinement.get("processes")) == (not fences_off), report.confinement
