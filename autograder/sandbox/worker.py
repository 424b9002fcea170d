"""Runs the worker process and keeps it on a leash: :class:`Worker`, the grader's side of one
submission's worker.

Time limits per cell (while loading), per stage and for the whole grading, a memory limit,
and no stray processes afterwards. A cell that ends or hangs the worker while loading is
recorded and skipped on the next start, so the rest of the notebook still runs. The
submission is loaded once; each stage runs in a copy of the loaded worker (forked), so a
stage that exits, crashes or runs out of time costs only that stage, and no cell runs twice.
The worker fences itself in before it runs any student code (:mod:`autograder.sandbox.confinement`);
where the settings require confinement a worker without fences is refused before it runs any
(:mod:`autograder.sandbox.launch`). What the grading process imports before the first cell
runs is the caller's to say (``preload``, :mod:`autograder.sandbox.preload`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from autograder.sandbox import fontcache, forkpool, oslayer, timings
from autograder.sandbox.forkserver import ForkServerError
from autograder.sandbox.lanes import Lane
from autograder.sandbox.launch import BOOT, confinement_refusal, worker_environment
from autograder.sandbox.limits import cores
from autograder.sandbox.loader import Cell
from autograder.sandbox.preload import Preload, run_preloads
from autograder.sandbox.scratch import ScratchWatch, empty_folder
from autograder.sandbox.settings import Settings
from autograder.sandbox.strays import (
    become_subreaper,
    descends_from_worker,
    end_stray_processes,
    seccomp_filters,
)


@dataclass
class LoadReport:
    cells: list[dict] = field(default_factory=list)  # per cell: index, status, error, seconds
    output: str = ""
    confinement: dict = field(default_factory=dict)  # which fences held (see confinement.py)


class Worker:
    """One worker process with the submission loaded."""

    def __init__(self, cells: list[Cell], device: str, settings: Settings, keep_outputs: bool = False,
                 preload: Sequence[Preload] = ()):
        self.cells, self.device, self.settings, self.limits = cells, device, settings, settings.limits
        oslayer.force_portable(settings.portable)  # the whole process's path, the grader's as the worker's
        # Run in this process before the submission's first cell (run_preloads); the caller's to
        # name, and to change until start()
        self.preload: tuple[Preload, ...] = tuple(preload)
        self.keep_outputs = keep_outputs  # each cell's printed output in the load report (nbgrader)
        self.give_up_at = time.monotonic() + self.limits.total_seconds
        self.confinement: dict = {}  # the fences the worker reported (confinement.py)
        self.proc: subprocess.Popen | None = None
        self.fatal: dict[int, str] = {}  # cell index -> why it is skipped
        self.report: LoadReport | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._workdir = tempfile.TemporaryDirectory(prefix="autograder-", ignore_cleanup_errors=True)
        # Marks of the worker's processes, so that only they are ended: this process may have
        # other children (a test runner's, a notebook server's) that are none of our business.
        self._token = uuid.uuid4().hex  # in the environment of everything the worker starts
        self._sessions: set[int] = set()  # each worker leads a session its children stay in
        self._filters = seccomp_filters("self")
        self._prestarted = False  # a process is running but has not loaded the submission yet
        self._scratch_pristine = True  # no cell was sent yet: what is in the scratch folder is ours (fontcache)
        self.scratch_full: str | None = None  # why the watch ended a process, until reported
        # Where stages are graded: the loaded worker's own pipes, and a second loaded copy's
        # (open_lane) when the grader grades two stages at once
        self.main_lane = Lane(self)
        self.side_lane: Lane | None = None
        self._lane_pipes: tuple[int, int] | None = None  # the grader's ends of the lane's pipes
        # The scratch watch's thread (and a second lane's) ends processes too: they take turns on
        # ``proc`` and each lane's ``stage_pid``, so that none signals a process another has let go.
        self._processes = threading.Lock()
        self._watch = ScratchWatch(self._workdir.name, self.limits.scratch_bytes, self._scratch_over)
        # One memory budget and process limit for the worker and all it starts (cgroups.py),
        # made at the first start; ``_budgeted``: the running worker was moved into it.
        self._budget = None
        self._budgeted = False

    # -- life cycle ---------------------------------------------------------------------
    def _spawn(self) -> None:
        scratch = self._workdir.name
        fontcache.copy_in(scratch)
        self._stderr.seek(0)
        self._stderr.truncate()
        become_subreaper()
        self._close_lane_pipes()
        # The lane's pipes (grader -> worker, worker -> grader): the worker's ends go with it
        lane_in, lane_out = (os.pipe(), os.pipe()) if self.lanes_possible else ((-1, -1), (-1, -1))
        theirs = (lane_in[0], lane_out[1]) if self.lanes_possible else ()
        proc = None
        try:
            server = forkpool.fork_server_for(self.device, self.limits)
            if server is not None:
                try:
                    env = worker_environment(scratch, self.device, self.settings, server.pid, self._token)
                    proc = server.spawn(env, scratch, self._stderr.fileno(), theirs)
                except ForkServerError:
                    forkpool.stop_fork_server()  # workers start afresh from now on
            if proc is None:
                env = worker_environment(scratch, self.device, self.settings, os.getpid(), self._token, theirs)
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=self._stderr, cwd=scratch, env=env, start_new_session=True, pass_fds=theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        if theirs:
            oslayer.set_nonblocking(lane_in[1])
            self._lane_pipes = (lane_in[1], lane_out[0])
        self._sessions.add(proc.pid)
        self._budgeted = self._join_budget(proc.pid)
        # Requests are written with a deadline: a worker that stops reading cannot block us.
        oslayer.set_nonblocking(proc.stdin.fileno())
        with self._processes:
            self.proc, self.scratch_full = proc, None

    def _join_budget(self, pid: int) -> bool:
        """Move the new worker (no student code has run in it yet) into its control groups."""
        from autograder.sandbox import cgroups

        if not oslayer.is_linux():
            return False
        if self._budget is None:
            self._budget = cgroups.Budget(self.limits.memory_bytes if self.device == "cpu" else None)
        return self._budget.add(pid)

    def prestart(self) -> None:
        """Start the process now and load the submission later, in :meth:`start`. Its Python
        and torch start-up (about 1.5 s) then runs while the grader imports its own torch and
        checks, instead of after them. (This module imports ``wire``, and so torch, only inside
        the methods that talk to the worker, so that importing it stays cheap.)"""
        self.kill()
        self._spawn()
        self._prestarted = True

    @property
    def needs_start(self) -> bool:
        """No process with the submission loaded: none yet, a prestarted one, or it died."""
        return self._prestarted or not self.alive

    def _startup_failure(self, why: str) -> RuntimeError:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return RuntimeError(f"the grading worker could not start ({why})" + (f":\n{tail}" if tail else ""))

    def start(self) -> LoadReport:
        """Start a worker and load the submission, skipping cells that killed earlier ones."""
        from autograder.sandbox import wire

        for _ in range(len(self.cells) + 1):
            if not (self._prestarted and self.alive):
                self.kill()
                self._spawn()
            self._prestarted = False
            self.reader = wire.Reader(self.proc.stdout.fileno())
            # while the worker still imports (it is ready later than this process, make bench-grader)
            run_preloads(self.preload)
            timings.mark("preloads_done")
            try:
                ready = self.reader.read(time.monotonic() + 120)
            except wire.WireError as exc:
                raise self._startup_failure(str(exc)) from None
            if not isinstance(ready, dict) or ready.get("event") != "ready":
                raise self._startup_failure("unexpected first message")
            timings.mark("worker_ready")
            self._note_startup(ready.get("startup"))
            self.confinement = ready.get("confinement") if isinstance(ready.get("confinement"), dict) else {}
            if self._budgeted:  # the grader's fence, not the worker's word
                self.confinement = {**self.confinement, "cgroup": self._budget.describe()}
            refusal = confinement_refusal(self.confinement, self.settings)
            if refusal:
                raise RuntimeError(refusal)
            if self._scratch_pristine:  # matplotlib's font list, written before any cell could run
                fontcache.keep_from(self._workdir.name)
            cells = [{"index": c.index, "name": c.name, "source": c.source}
                     for c in self.cells if c.index not in self.fatal]
            running = None
            self._scratch_pristine = False
            try:
                self._send({"op": "load_submission", "cells": cells, "device": self.device,
                            "outputs": self.keep_outputs}, time.monotonic() + 120)
                timings.mark("notebook_sent")
                while True:
                    if time.monotonic() >= self.give_up_at:
                        raise RuntimeError(self._over_time("loading the notebook"))
                    message = self.reader.read(min(time.monotonic() + self.limits.cell_seconds, self.give_up_at))
                    if message.get("event") == "cell":
                        running = int(message["index"])
                    elif message.get("event") == "loaded":
                        timings.mark("notebook_loaded")
                        self.report = self._merge(message, self.confinement)
                        return self.report
                    else:
                        raise wire.WireError("unexpected message while loading")
            except (wire.WireError, OSError, AttributeError, KeyError, TypeError, ValueError) as exc:
                if time.monotonic() >= self.give_up_at:
                    raise RuntimeError(self._over_time("loading the notebook")) from None
                if running is None or running in self.fatal:
                    raise self._startup_failure(str(exc)) from None
                full = self._scratch_note()
                self.fatal[running] = (
                    f"{full}; skipped, the other cells still ran" if full
                    else f"stopped after {self.limits.cell_seconds:g} s (an endless loop?); skipped, the "
                    "other cells still ran" if isinstance(exc, wire.WireTimeout)
                    else "ended the grading process (sys.exit in a thread, os._exit, os.kill or a "
                         "crash); skipped, the other cells still ran")
        raise RuntimeError("every cell of the submission ended the grading process")

    @staticmethod
    def _note_startup(startup) -> None:
        """The worker's own start-up moments, sent with "ready" before any student code ran
        (child.main): for make bench-grader's breakdown only, never for a grade."""
        if not timings.enabled() or not isinstance(startup, dict):
            return
        for name in ("booted", "torch", "notebook_imports", "fenced"):
            value = startup.get(name)
            if isinstance(value, float):
                timings.mark(f"worker_{name}", value)

    def _over_time(self, doing: str) -> str:
        return (f"the grading's overall time limit ({self.limits.total_seconds:g} s) ran out while {doing}; "
                "look for slow cells (long loops, training runs) and move them out of the notebook")

    def _merge(self, message: dict, confinement) -> LoadReport:
        cells = [c for c in message.get("cells", []) if isinstance(c, dict)]
        names = {c.index: c.name for c in self.cells}
        for cell in cells:  # every message names a cell as the student finds it (loader.cell_label)
            cell.setdefault("name", names.get(cell.get("index"), ""))
        for index, why in self.fatal.items():
            cells.append({"index": index, "name": names.get(index, ""), "status": "error", "seconds": None,
                          "error": {"kind": "fatal", "type": "", "message": why, "where": names.get(index, "")}})
        cells.sort(key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)
        return LoadReport(cells=cells, output=str(message.get("output", "")),
                          confinement=confinement if isinstance(confinement, dict) else {})

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def lanes_possible(self) -> bool:
        """Whether a second lane can be opened: stages run in forked copies (Linux), on the CPU
        (a process that started CUDA cannot fork a working copy), and more than one core."""
        return self.device == "cpu" and oslayer.stages_fork() and self.limits.lanes > 1 and cores() > 1

    def open_lane(self, warm_up: bool = False) -> Lane | None:
        """A second lane: a copy of the loaded worker, made before any stage's copy, that forks
        the stages graded through it while the loaded worker forks the others (so two stages
        are graded at once, each in a copy of the same loaded state). ``warm_up``: it imports
        the meta device's modules before its first stage (child._warm_up_meta_device). Call it
        after :meth:`start` and before the first stage; None when the worker has no lane
        (another system, CUDA, one core, or it could not be opened): grade on the main lane."""
        from autograder.sandbox import wire

        if self.side_lane is not None and self.side_lane.alive:
            return self.side_lane
        pipes, self._lane_pipes = self._lane_pipes, None
        if pipes is None or not self.alive or self.needs_start:
            return None
        try:
            self._send({"op": "open_lane", "warm_up": bool(warm_up)}, time.monotonic() + 10)
            opened = self.reader.read(time.monotonic() + 10)
        except (wire.WireError, OSError):
            opened = None
        loader = opened.get("pid") if isinstance(opened, dict) and opened.get("event") == "lane_opened" else None
        found = oslayer.parent_and_group(loader) if type(loader) is int and loader > 1 else None
        if found is None or found[0] != self.proc.pid:
            for fd in pipes:
                os.close(fd)
            if opened is not None and not (isinstance(opened, dict) and opened.get("event") == "no_lane"):
                self.kill()  # the loaded worker answered something else: it loads afresh for the next stage
            return None
        self.side_lane = Lane(self, pipes, loader)
        return self.side_lane

    def _close_lane_pipes(self) -> None:
        """The lane's pipes no lane took, closed; an open lane is ended (its loader dies with the
        loaded worker), and its pipes are closed by whoever grades through it (Lane.close), so
        that no file descriptor it may still read is closed under it and reused."""
        pipes, self._lane_pipes = self._lane_pipes, None
        for fd in pipes or ():
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.side_lane is not None:
            self.side_lane.end()

    def kill(self) -> None:
        with self._processes:
            proc, self.proc, self.main_lane.stage_pid = self.proc, None, None
        self._close_lane_pipes()
        if proc is None:
            return
        oslayer.kill_process_tree(proc)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        release = getattr(proc, "release", None)  # a forked worker's pidfd (forkserver.py)
        if release is not None:
            release()
        end_stray_processes(belongs=self._from_worker)

    def _from_worker(self, pid: int) -> bool:
        """Whether a child of this process descends from one of this Worker's processes."""
        return descends_from_worker(pid, self._sessions, self._filters, self._token)

    def _scratch_over(self, why: str) -> None:
        """The watch's action (its thread): end the stages' copies when stages run (the loaded
        worker stays for the next stage), else the worker, and empty the folder."""
        with self._processes:
            self.scratch_full = why
            running = [lane for lane in (self.main_lane, self.side_lane)
                       if lane is not None and lane.stage_pid is not None and not lane.stage_in_place]
            for lane in running:
                lane.scratch_full = why
                lane.kill_stage_copy(lane.stage_pid)
            if not running and self.proc is not None:
                oslayer.kill_process_tree(self.proc)
        empty_folder(self._workdir.name)

    def _scratch_note(self) -> str | None:
        note, self.scratch_full = self.scratch_full, None
        return note

    def close(self) -> None:
        self._watch.stop()
        self.kill()
        lane, self.side_lane = self.side_lane, None
        if lane is not None:
            lane.close()
        if self._budget is not None:
            self._budget.close(belongs=self._from_worker)
        self._stderr.close()
        self._workdir.cleanup()

    # -- requests -----------------------------------------------------------------------
    def _send(self, obj, deadline: float) -> None:
        from autograder.sandbox import wire

        wire.write(self.proc.stdin.fileno(), obj, deadline)

    # A stage on the main lane (the loaded worker's own pipes): what the engine and the tests call
    def begin_stage(self, number: int, warm_up: bool = True) -> None:
        self.main_lane.begin_stage(number, warm_up)

    def end_stage(self, ask: bool = True) -> None:
        self.main_lane.end_stage(ask)

    def request(self, req: dict) -> dict:
        return self.main_lane.request(req)
