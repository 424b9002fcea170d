"""The worker: the only process that runs the student's code.

It loads the submission's cells, then answers requests from the grader (build this module,
run it on this input, hand over its weights). It never sees an expected answer and never
judges: the grader compares in its own process. So nothing the submission does here
(patching torch or the grader's modules, printing, exiting) can change how it is judged;
at most it changes the outputs it sends, which are then judged like any other outputs.
Started by :mod:`autograder.sandbox.worker` as ``python -I``; talks over two private pipes.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import sys
import time

# When this module was imported (the interpreter's start-up done): the first of the start-up
# moments "ready" reports, for make bench-grader (autograder.sandbox.timings)
BOOTED = time.monotonic()

# The grader's handshake, the one variable of the worker's environment that comes from it: a JSON
# object (autograder.sandbox.launch.worker_environment says what it holds).
HANDSHAKE = "AUTOGRADER_WORKER"
OUTPUT_LIMIT = 20_000          # characters of the student's printed output kept for the report
ANSWER_LIMIT = 256 * 2**20     # bytes of tensors in one answer; the largest real one is ~10 MB


class BoundedText(io.TextIOBase):
    """Keeps the first characters written to it and counts the rest (print floods)."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit, self.parts, self.kept, self.dropped = limit, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = text if isinstance(text, str) else str(text)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def take(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n... ({self.dropped} more characters of output not shown)"
        self.parts, self.kept, self.dropped = [], 0, 0
        return text


CAPTURED = BoundedText()
CAPTURED_ERR = BoundedText()  # stderr apart (warnings): nbgrader's feedback shows the two streams


def _capture_prints() -> None:
    """Point print() at the bounded buffers again (a cell may have replaced sys.stdout)."""
    sys.stdout, sys.stderr = CAPTURED, CAPTURED_ERR


def _claim_channels(debug: bool) -> tuple[int, int]:
    """Move the protocol pipes off fds 0/1 so that the student's prints, ``input()`` and
    subprocesses can neither read nor corrupt them. ``debug`` keeps stderr (Settings.debug)."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1) if debug else (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - stays open for the process's life, as stdin does
    _capture_prints()
    return proto_in, proto_out


def _claim_lane(handshake: dict) -> tuple[int, int] | None:
    """A second channel's pipes, (IN, OUT), passed at start: a lane (sandbox.lanes, open_lane
    below). Kept from what the worker starts: its file descriptors and the handshake's entry."""
    try:
        fds = tuple(int(fd) for fd in handshake.pop("lane", ()))
        os.environ[HANDSHAKE] = json.dumps(handshake)
        for fd in fds:
            os.set_inheritable(fd, False)
    except (ValueError, OSError):
        return None
    return fds if len(fds) == 2 else None


FILE_SIZE_LIMIT = 2**30  # bytes per file the submission writes (in its scratch folder)
PROCESS_ROOM = 64        # processes the worker may start beyond what its user already runs


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if entry.name.isdigit():
            try:
                count += os.stat(entry.path).st_uid == uid
            except OSError:
                pass
    return count


def _limit_resources(limit: int) -> dict:
    """Resource limits, returned for the report. Memory: the address space of each process
    (a worker and each child it starts get the same budget; cgroup v2 would make it one
    budget, docs/security.md). Processes: RLIMIT_NPROC counts every process of the user, so the limit
    is what the user already runs plus :data:`PROCESS_ROOM` (the kernel exempts root)."""
    from autograder.sandbox import oslayer

    applied = {}
    if limit > 0 and oslayer.set_resource_limit("AS", limit):
        applied["memory"] = f"{limit / 2**30:g} GiB per process"
    # A file that grows without end fills the disk of every grader on the machine; past the
    # limit a write fails with "File too large" (Python ignores SIGXFSZ).
    if oslayer.set_resource_limit("FSIZE", FILE_SIZE_LIMIT):
        applied["file size"] = f"{FILE_SIZE_LIMIT / 2**30:g} GiB"
    if oslayer.is_linux() and os.getuid() != 0:
        processes = _processes_of(os.getuid()) + PROCESS_ROOM
        if oslayer.set_resource_limit("NPROC", processes):
            applied["processes"] = f"{PROCESS_ROOM} more"
    return applied


def _follow_grader(grader_pid) -> None:
    """Die with the grader: a worker looping in student code must not outlive it."""
    from autograder.sandbox.oslayer import die_with_parent

    die_with_parent()
    if grader_pid is not None and os.getppid() != grader_pid:
        os._exit(3)  # the grader ended before the line above took effect


def run_cells(cells: list[dict], namespace: dict, send, keep_outputs: bool = False) -> list[dict]:
    import linecache

    from autograder.sandbox.loader import strip_magics
    from autograder.sandbox.workspace import describe_error, printable

    statuses = []
    for cell in cells:
        index, source = int(cell["index"]), str(cell["source"])
        name = str(cell.get("name") or f"cell {index}")
        # the cell's text for tracebacks, as IPython keeps it: an error names the line of code
        # (an entry without mtime survives linecache.checkcache)
        linecache.cache[f"<{name}>"] = (len(source), None, source.splitlines(True), f"<{name}>")
        send({"event": "cell", "index": index})
        status = {"index": index, "status": "ok"}
        started = time.monotonic()
        try:
            try:
                code = compile(source, f"<{name}>", "exec")
            except SyntaxError:
                stripped = strip_magics(source)
                if stripped == source:
                    raise
                code = compile(stripped, f"<{name}>", "exec")
            exec(code, namespace)
        except BaseException as exc:
            status = {"index": index, "status": "error", "error": describe_error(exc)}
            if isinstance(exc, SyntaxError):  # its str() repeats the cell's name, and a cut one ends in "line)"
                status["error"]["message"] = printable(str(exc.msg)[:600])
                status["error"]["where"] = f"{name}, line {exc.lineno}"
                status["error"]["code"] = (exc.text or "").strip()[:120]
        _capture_prints()
        status["seconds"] = round(time.monotonic() - started, 3)
        if keep_outputs:  # what the cell printed, for nbgrader's autograded notebook and feedback
            status["stdout"], status["stderr"] = CAPTURED.take(), CAPTURED_ERR.take()
        statuses.append(status)
    return statuses


def _tensor_bytes(obj) -> int:
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(_tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_tensor_bytes(v) for v in obj)
    return 0


def _frame(answer, wire) -> bytes:
    """The answer as a frame; an output that is too large or cannot be encoded (a tensor
    type the wire does not know) becomes an error the grader shows, instead of a crash."""
    try:
        size = _tensor_bytes(answer)
        if size > ANSWER_LIMIT:
            message = (f"the output holds {size / 2**20:.0f} MiB of tensors, far more than this "
                       "stage needs; check the shapes you create")
        else:
            return wire.encode(answer)
    except BaseException as exc:
        message = f"the output could not be sent to the grader ({type(exc).__name__}: {str(exc)[:200]})"
    return wire.encode({"error": {"kind": "exception", "type": "UnreadableOutput", "message": message,
                                  "where": ""}})


@contextlib.contextmanager
def imports_uncollected():
    """No garbage collection while importing: what an import makes lives as long as the
    process, yet the collector walks it again and again as it grows (about 0.3 s of CPU in
    ``import torch`` and matplotlib's, 0.1 s in the meta device's modules). Afterwards it is
    frozen (never walked again, here or in a copy forked later) and collection resumes as it
    was (the submission may have turned it off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def _warm_up_meta_device() -> None:
    """Import what PyTorch imports on the first forward pass on the 'meta' device
    (torch._dynamo and symbolic shapes: about 1.3 s of CPU, as much as ``import torch``). The
    checks of stages 4 to 6 run the submission there, each stage in a copy of this process:
    imported here once, every later copy has it. The loaded worker imports it right after it
    forked the first stage's copy, while it would only wait for that copy: the import overlaps
    the first stages' checks instead of delaying them, and no thread is ever running when the
    worker forks (a fork in the middle of an import would leave the child's import locks
    held). A worker forked from the fork server has it already. Importing changes no random
    state."""
    try:
        with imports_uncollected():
            import torch._dynamo
            import torch.fx.experimental.symbolic_shapes  # noqa: F401
    except BaseException:  # the submission's import hooks may raise anything: its stages then import lazily
        pass


# What the course's notebooks import besides torch (pyproject's "notebook" extra): imported
# before the fences and before any cell, while the grader still imports its own modules (or
# once, in the fork server), instead of inside the first cell (about 0.5 s of CPU). A worker
# without it (a plain install) imports nothing here; the notebook's own import then fails as
# it would anywhere.
NOTEBOOK_IMPORTS = ("matplotlib.pyplot",)


def preload_notebook_imports() -> None:
    import importlib

    for name in NOTEBOOK_IMPORTS:
        try:
            importlib.import_module(name)
        except Exception:
            pass


def pin_threads(threads: int) -> None:
    """PyTorch's thread count back to the worker's (the handshake's), whatever the
    notebook set: the same speed for every submission, and no hang in a stage's copy. A copy
    forked after the notebook ran parallel work on several threads inherits a thread pool
    whose threads it does not have, and its first parallel region would wait for them
    forever; on one thread PyTorch never enters the pool."""
    import torch

    torch.set_num_threads(threads)


def _fence_stage_process(handshake: dict) -> None:
    """A stage's copy leads a process group of its own and signals only itself: the seccomp
    filter it inherits names the loaded worker's pid as "itself", so a second filter (filters
    stack, each must allow) names its own. It dies with the loaded worker, and computes on the
    worker's thread count (:func:`pin_threads`)."""
    from autograder.sandbox.confinement import refilter_signals
    from autograder.sandbox.oslayer import die_with_parent, keep_freed_memory

    os.setpgid(0, 0)
    die_with_parent()
    if handshake.get("fences", True):
        refilter_signals()
    pin_threads(handshake.get("threads", 1))
    keep_freed_memory()


def main() -> None:
    handshake = json.loads(os.environ.get(HANDSHAKE, "{}"))
    from autograder.sandbox import oslayer

    oslayer.force_portable(handshake.get("portable"))
    _follow_grader(handshake.get("grader_pid"))
    proto_in, proto_out = _claim_channels(bool(handshake.get("debug")))
    lane = _claim_lane(handshake)
    limits = _limit_resources(int(handshake.get("memory_bytes") or 0))
    os.environ.setdefault("MPLBACKEND", "Agg")
    with imports_uncollected():
        import torch

        startup = {"booted": BOOTED, "torch": time.monotonic()}

        from autograder.sandbox import wire
        from autograder.sandbox.confinement import confine
        from autograder.sandbox.workspace import Workspace

        pin_threads(handshake.get("threads", 1))
        preload_notebook_imports()
    startup["notebook_imports"] = time.monotonic()
    reader = wire.Reader(proto_in, deadlines=False)
    write = os.write  # the submission may patch os.write; the protocol keeps its own
    channel = {"out": proto_out}  # a lane's loader answers on the lane's pipe (open_lane)

    def send_raw(data) -> None:
        data = memoryview(data)
        while data:
            data = data[write(channel["out"], data):]

    def send(obj) -> None:
        send_raw(_frame(obj, wire))

    def stages_fork() -> bool:
        # A copy forked from a process that started CUDA cannot use CUDA: then stages run in place.
        return oslayer.stages_fork() and not torch.cuda.is_initialized()

    devices: tuple[str, ...] = ()
    if handshake.get("device") == "cuda":
        # The driver opens device files and caches before the fences go up, not in student code.
        try:
            torch.zeros(1, device="cuda")
        except Exception:
            pass
        devices = tuple(os.path.join("/dev", d) for d in os.listdir("/dev") if d.startswith("nvidia"))
    # The package's parent folder: a checkout or site-packages (this file is autograder/sandbox/child.py).
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # From here on the worker reads only what it needs and writes only in its scratch folder.
    fences = confine(os.getcwd(), package_parent, devices, handshake.get("fences", True))
    fences["limits"] = limits
    namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__,
                       "display": lambda *a, **k: None}
    workspace: Workspace | None = None
    warmed_up = False
    stage_copy = False  # True in a stage's copy of the loaded worker
    lane_loader = False  # True in the lane's loader (open_lane), a copy made before any stage
    startup["fenced"] = time.monotonic()
    send({"event": "ready", "confinement": fences, "startup": startup})
    while True:
        try:
            request = reader.read()
        except wire.WireError:
            request = None
        if not isinstance(request, dict):
            if lane_loader:  # the grader closed the lane: the student's exit handlers stay unrun
                os._exit(0)
            return
        op = request.get("op")
        if op == "load_submission":
            torch.manual_seed(0)
            statuses = run_cells(request["cells"], namespace, send, bool(request.get("outputs")))
            pin_threads(handshake.get("threads", 1))
            workspace = Workspace(namespace, request.get("device", "cpu"))
            send({"event": "loaded", "cells": statuses, "output": CAPTURED.take() + CAPTURED_ERR.take()})
        elif workspace is None:
            send({"error": {"kind": "protocol", "type": "", "message": "load first", "where": ""}})
        elif op == "open_lane":
            # A second loaded copy, made before any stage's, forks the stages sent through the
            # lane's pipes while this process forks the others: two stages at once, alike.
            if lane is None or stage_copy or lane_loader or not stages_fork():
                send({"event": "no_lane"})
                continue
            gc.freeze()
            pid = os.fork()
            if pid == 0:
                oslayer.die_with_parent()
                os.close(proto_in)
                os.close(proto_out)
                reader, channel["out"] = wire.Reader(lane[0], deadlines=False), lane[1]
                proto_in, proto_out, lane, lane_loader = lane[0], lane[1], None, True
                if request.get("warm_up") and not warmed_up:  # before its first stage, beside the other's
                    _warm_up_meta_device()
                    warmed_up = True
                send({"event": "lane", "pid": os.getpid()})
                continue
            for fd in lane:
                os.close(fd)
            lane = None
            send({"event": "lane_opened", "pid": pid})
        elif op == "fork_stage":
            # Each stage runs in a copy of the loaded worker: a stage that exits, crashes or
            # runs out of time ends its copy only, and no cell ever runs twice.
            if not stages_fork():
                # The portable fallback (oslayer): this process answers the stage itself, and
                # reseeds for it as a copy would; a stage that ends it costs that stage only.
                if not warmed_up:
                    _warm_up_meta_device()
                    warmed_up = True
                stage_copy = False
                send({"event": "stage", "pid": os.getpid(), "in_place": True})
                continue
            for fd in lane or ():  # no lane was opened: no stage's copy holds its pipes
                os.close(fd)
            lane = None
            # Objects that exist now are never collected in a copy: a collection there
            # would touch (and so copy) every page of the loaded worker's heap.
            gc.freeze()
            pid = os.fork()
            if pid == 0:
                stage_copy = True
                _fence_stage_process(handshake)
                send({"event": "stage", "pid": os.getpid()})
                continue  # this copy answers the stage's requests, until "end_stage"
            if not warmed_up and request.get("warm_up", True):
                _warm_up_meta_device()
                warmed_up = True
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            send_raw(wire.STAGE_OVER)
        elif op == "end_stage":
            if stage_copy:
                os._exit(0)
            if not stages_fork():
                send_raw(wire.STAGE_OVER)
        else:
            answer = workspace.dispatch(request)
            _capture_prints()
            send(answer)


if __name__ == "__main__":
    main()
