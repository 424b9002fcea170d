"""The worker's main: the only process that runs the student's code. It never sees an expected
answer, so nothing the submission does here can change how its outputs are judged."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import linecache
import os
import sys

from autograder.sandbox import oslayer
from autograder.sandbox.loader import strip_magics

# The folder holding the package: a checkout or site-packages.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HANDSHAKE = "AUTOGRADER_WORKER"  # the one variable the grader sets (launch.worker_environment)
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
    """The protocol pipes moved off fds 0/1, out of reach of prints, ``input()`` and subprocesses
    (``debug`` keeps stderr)."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1) if debug else (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - stays open for the process's life, as stdin does
    _capture_prints()
    return proto_in, proto_out


FILE_SIZE_LIMIT = 2**30  # bytes per file the submission writes (in its scratch folder)
PROCESS_ROOM = 64        # processes the worker may start beyond what its user already runs


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                count += os.stat(entry.path).st_uid == uid
    return count


def _limit_resources(limit: int) -> dict:
    """Per-process limits, for the report. RLIMIT_NPROC counts all the user's processes."""
    applied = {}
    if limit > 0 and oslayer.set_resource_limit("AS", limit):
        applied["memory"] = f"{limit / 2**30:g} GiB per process"
    # past it a write fails with "File too large" (Python ignores SIGXFSZ)
    if oslayer.set_resource_limit("FSIZE", FILE_SIZE_LIMIT):
        applied["file size"] = f"{FILE_SIZE_LIMIT / 2**30:g} GiB"
    if oslayer.is_linux() and os.getuid() != 0:
        processes = _processes_of(os.getuid()) + PROCESS_ROOM
        if oslayer.set_resource_limit("NPROC", processes):
            applied["processes"] = f"{PROCESS_ROOM} more"
    return applied


def run_cells(cells: list[dict], namespace: dict, send, keep_outputs: bool = False) -> list[dict]:
    from autograder.sandbox.workspace import describe_error

    statuses = []
    for cell in cells:
        index, source = int(cell["index"]), str(cell["source"])
        name = str(cell.get("name") or f"cell {index}")
        # the cell's text for tracebacks, as IPython keeps it (no mtime: survives checkcache)
        linecache.cache[f"<{name}>"] = (len(source), None, source.splitlines(True), f"<{name}>")
        send({"event": "cell", "index": index})
        status = {"index": index, "status": "ok"}
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
                status["error"].update(message=str(exc.msg)[:600], where=f"{name}, line {exc.lineno}",
                                       code=(exc.text or "").strip()[:120])
        _capture_prints()
        if keep_outputs:  # what the cell printed, for nbgrader's autograded notebook and feedback
            status["stdout"], status["stderr"] = CAPTURED.take(), CAPTURED_ERR.take()
        statuses.append(status)
    return statuses


def _frame(answer, wire) -> bytes:
    """The answer as a frame; one too large or that cannot be encoded becomes an error to show."""
    import torch
    from torch.utils._pytree import tree_flatten

    try:
        size = sum(t.numel() * t.element_size() for t in tree_flatten(answer)[0] if isinstance(t, torch.Tensor))
        if size > ANSWER_LIMIT:
            message = (f"the output holds {size / 2**20:.0f} MiB of tensors, far more than this "
                       "stage needs; check the shapes you create")
        else:
            return wire.encode(answer)
    except BaseException as exc:
        message = f"the output could not be sent to the grader ({type(exc).__name__}: {str(exc)[:200]})"
    return wire.encode({"error": {"kind": "exception", "type": "UnreadableOutput", "message": message,
                                  "where": ""}})


def preload_notebook_imports() -> None:
    """What the course's notebooks import besides torch, imported before student code."""
    with contextlib.suppress(Exception):
        import matplotlib.pyplot  # noqa: F401


def pin_threads() -> None:
    """Back to one thread (a cell may raise it): a stage's copy would hang on a thread pool without its threads."""
    import torch

    torch.set_num_threads(1)


def main() -> None:
    handshake = json.loads(os.environ.get(HANDSHAKE, "{}"))
    oslayer.force_portable(handshake.get("portable"))
    oslayer.die_with_parent()  # a worker looping in student code must not outlive the grader
    if handshake.get("grader_pid") not in (None, os.getppid()):
        os._exit(3)  # the grader ended before the line above took effect
    proto_in, proto_out = _claim_channels(bool(handshake.get("debug")))
    limits = _limit_resources(int(handshake.get("memory_bytes") or 0))
    import torch

    from autograder.sandbox import wire
    from autograder.sandbox.confinement import confine, install_seccomp
    from autograder.sandbox.workspace import Workspace

    pin_threads()
    preload_notebook_imports()
    reader = wire.Reader(proto_in, deadlines=False, clean=False)
    write = os.write  # the submission may patch os.write; the protocol keeps its own

    def send_raw(data) -> None:
        data = memoryview(data)
        while data:
            data = data[write(proto_out, data):]

    def send(obj) -> None:
        send_raw(_frame(obj, wire))

    devices: tuple[str, ...] = ()
    if handshake.get("device") == "cuda":
        # The driver opens device files and caches before the fences go up, not in student code.
        with contextlib.suppress(Exception):
            torch.zeros(1, device="cuda")
        devices = tuple(os.path.join("/dev", d) for d in os.listdir("/dev") if d.startswith("nvidia"))
    # From here on the worker reads only what it needs and writes only in its scratch folder.
    fences = confine(os.getcwd(), PACKAGE_PARENT, devices, handshake.get("fences", True))
    fences["limits"] = limits
    namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__,
                       "display": lambda *a, **k: None}
    workspace: Workspace | None = None
    send({"event": "ready", "confinement": fences})
    while True:
        try:
            request = reader.read()  # the grader's frames are dicts
        except wire.WireError:  # the grader closed the channel
            return
        op = request.get("op")
        if op == "load_submission":
            torch.manual_seed(0)
            statuses = run_cells(request["cells"], namespace, send, bool(request.get("outputs")))
            pin_threads()
            workspace = Workspace(namespace, handshake.get("device", "cpu"))
            send({"event": "loaded", "cells": statuses})
        elif op == "fork_stage":
            workspace.dispatch({"op": "reseed", "seed": request.get("seed")})  # the copy inherits the generators
            # Each stage runs in a copy of the loaded worker, on Linux only: macOS forbids forking once PyTorch
            # started Apple's frameworks, and a copy of a process that started CUDA cannot use it.
            if not oslayer.is_linux() or torch.cuda.is_initialized():
                send({"event": "stage", "pid": os.getpid(), "in_place": True})
                continue
            gc.freeze()  # the stage's copy collects only what it makes, and leaves the pages shared
            pid = os.fork()
            if pid == 0:  # the copy leads its own group, dies with the loaded worker and signals only itself
                os.setpgid(0, 0)
                oslayer.die_with_parent()
                if handshake.get("fences", True):
                    install_seccomp()
                pin_threads()
                send({"event": "stage", "pid": os.getpid()})
                continue  # this copy answers the stage's requests until the grader kills it
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            send_raw(wire.STAGE_OVER)
        elif op == "end_stage":  # a stage run in place
            send_raw(wire.STAGE_OVER)
        else:
            answer = workspace.dispatch(request)
            _capture_prints()
            send(answer)
