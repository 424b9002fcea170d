"""Runs the worker process and keeps it on a leash.

Time limits per cell (while loading) and per stage, a memory limit, a fresh worker after
any crash, and no stray processes afterwards. A cell that ends or hangs the worker while
loading is recorded and skipped on the next start, so the rest of the notebook still runs.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder import wire
from autograder.failures import StageAborted
from autograder.loader import Cell

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
# -I: no user site, no PYTHONPATH, no current directory on sys.path, so a stray torch.py
# beside the submission cannot shadow the real module. The package's own folder goes
# last on the path, for a checkout that is not pip-installed.
_BOOT = ("import sys; sys.path.append({!r}); "
         "from autograder.worker import main; main()").format(PACKAGE_PARENT)


def become_subreaper() -> None:
    """Orphans of the worker (a daemon it forked) are re-parented to us, so we can end them."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            found.append(int(entry.name))
    return found


def end_stray_processes(known: set[int] | None = None) -> None:
    """Kill every descendant re-parented to this process (needs :func:`become_subreaper`)."""
    for _ in range(5):
        strays = [p for p in _children_of(os.getpid()) if not known or p not in known]
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError, PermissionError):
                pass


@dataclass
class Limits:
    cell_seconds: float = 60.0      # one notebook cell while loading
    stage_seconds: float = 60.0     # all checks of one stage
    memory_bytes: int = 8 * 2**30   # address space of the worker (CPU only)
    threads: int = 1


@dataclass
class LoadReport:
    cells: list[dict] = field(default_factory=list)  # per cell: index, status, error, seconds
    output: str = ""


class Worker:
    """One worker process with the submission loaded."""

    def __init__(self, cells: list[Cell], device: str, limits: Limits):
        self.cells, self.device, self.limits = cells, device, limits
        self.proc: subprocess.Popen | None = None
        self.fatal: dict[int, str] = {}  # cell index -> why it is skipped
        self.report: LoadReport | None = None
        self.stage_deadline: float | None = None
        self._stderr = tempfile.TemporaryFile()
        self._workdir = tempfile.TemporaryDirectory(prefix="autograder-")

    # -- life cycle ---------------------------------------------------------------------
    def _spawn(self) -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTHON", "AUTOGRADER_")) or k == "AUTOGRADER_DEBUG"}
        env.update(MPLBACKEND="Agg", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
                   AUTOGRADER_THREADS=str(self.limits.threads), OMP_NUM_THREADS=str(self.limits.threads))
        if self.device == "cpu":
            env["AUTOGRADER_MEMORY_LIMIT"] = str(self.limits.memory_bytes)
            env["CUDA_VISIBLE_DEVICES"] = ""
        self._stderr.seek(0)
        self._stderr.truncate()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, cwd=self._workdir.name, env=env, start_new_session=True)
        self.reader = wire.Reader(self.proc.stdout.fileno())

    def _startup_failure(self, why: str) -> RuntimeError:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return RuntimeError(f"the grading worker could not start ({why})" + (f":\n{tail}" if tail else ""))

    def start(self) -> LoadReport:
        """Start a worker and load the submission, skipping cells that killed earlier ones."""
        for _ in range(len(self.cells) + 1):
            self.kill()
            self._spawn()
            try:
                ready = self.reader.read(time.monotonic() + 120)
            except wire.WireError as exc:
                raise self._startup_failure(str(exc)) from None
            if ready.get("event") != "ready":
                raise self._startup_failure("unexpected first message")
            cells = [{"index": c.index, "source": c.source} for c in self.cells if c.index not in self.fatal]
            self._send({"op": "load_submission", "cells": cells, "device": self.device})
            running = None
            try:
                while True:
                    message = self.reader.read(time.monotonic() + self.limits.cell_seconds)
                    if message.get("event") == "cell":
                        running = int(message["index"])
                    elif message.get("event") == "loaded":
                        self.report = self._merge(message)
                        return self.report
                    else:
                        raise wire.WireError("unexpected message while loading")
            except (wire.WireError, KeyError, TypeError, ValueError) as exc:
                timed_out = isinstance(exc, wire.WireTimeout)
                if running is None:
                    raise self._startup_failure(str(exc)) from None
                self.fatal[running] = (
                    f"stopped after {self.limits.cell_seconds:.0f} s (an endless loop?)" if timed_out
                    else "this cell ended the grading process (sys.exit, os._exit or a crash); skipped")
        raise RuntimeError("every cell of the submission ended the grading process")

    def _merge(self, message: dict) -> LoadReport:
        cells = [c for c in message.get("cells", []) if isinstance(c, dict)]
        for index, why in self.fatal.items():
            cells.append({"index": index, "status": "error", "seconds": None,
                          "error": {"kind": "fatal", "type": "", "message": why, "where": f"cell {index}"}})
        cells.sort(key=lambda c: c.get("index", 0))
        return LoadReport(cells=cells, output=str(message.get("output", "")))

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.proc = None
        end_stray_processes()

    def close(self) -> None:
        self.kill()
        self._stderr.close()
        self._workdir.cleanup()

    # -- requests -----------------------------------------------------------------------
    def _send(self, obj) -> None:
        wire.write(self.proc.stdin.fileno(), obj)

    def request(self, req: dict) -> dict:
        if not self.alive:
            raise StageAborted("the grading process for this stage had already stopped")
        deadline = self.stage_deadline or (time.monotonic() + self.limits.stage_seconds)
        try:
            self._send(req)
            answer = self.reader.read(deadline)
        except wire.WireTimeout:
            self.kill()
            raise StageAborted(
                f"stopped after {self.limits.stage_seconds:.0f} s",
                "an endless loop, or code far slower than it should be (Python loops over "
                "tensor elements?)") from None
        except (wire.WireError, OSError):
            self.kill()
            raise StageAborted(
                "the submission ended the grading process during this stage",
                "remove sys.exit / os._exit / exit() calls; a crash inside PyTorch can also cause "
                "this (very large tensors?)") from None
        if not isinstance(answer, dict):
            self.kill()
            raise StageAborted("the grading process sent a malformed answer")
        return answer
