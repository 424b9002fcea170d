"""The grader's side of one submission's worker, kept on a leash (time, memory, scratch folder, no
stray processes); each stage runs in a forked copy, so a stage that fails costs that stage only."""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence

from autograder.sandbox import cgroups, launch, oslayer
from autograder.sandbox.errors import StageAborted, ended_the_stage, over_the_stage_time_limit
from autograder.sandbox.forkserver import ForkServerError
from autograder.sandbox.launch import BOOT, confinement_refusal, stop_fork_server, worker_environment
from autograder.sandbox.loader import Cell, strip_magics
from autograder.sandbox.settings import Settings
from autograder.sandbox.strays import descends_from_worker, end_stray_processes, seccomp_filters

# Run in the grader before the first cell: no module file is read after student code could have
# touched it (defence in depth where Landlock is missing).
Preload = Callable[[], None]
_preloaded: set = set()  # each runs once per process


def run_preloads(preload: Sequence[Preload]) -> None:
    """Run each of ``preload`` not run yet; what they imported is frozen (it lives as long as the
    process), and the collector is on again (a grading's imports ran without it: __main__.py)."""
    new = [warm_up for warm_up in preload if warm_up not in _preloaded]
    for warm_up in new:
        _preloaded.add(warm_up)
        warm_up()
    if new:
        gc.freeze()
    gc.enable()


SCRATCH_MOST_ENTRIES = 10_000  # past this it counts as full: counting more would cost the grader


def scratch_usage(folder: str, stop_above: int, most_entries: int = SCRATCH_MOST_ENTRIES) -> int | None:
    """Bytes beneath ``folder`` on disk, counted until past ``stop_above``; ``None`` past ``most_entries``."""
    total, entries, folders = 0, 0, [folder]  # a stack: os.walk recurses, and a deep tree would end the watch
    while folders and total <= stop_above:
        try:
            with os.scandir(folders.pop()) as found:
                for entry in found:
                    entries += 1
                    if entries > most_entries:
                        return None
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    # st_blocks: what the file takes on disk (a sparse file of 0 blocks takes none)
                    total += info.st_blocks * 512 if hasattr(info, "st_blocks") else info.st_size
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
        except OSError:
            continue
    return total


class ScratchWatch:
    """A thread that measures the folder four times a second and, past the limit, calls ``over(why)``
    (RLIMIT_FSIZE bounds each file, this all of them; docs/security.md: Known limits)."""

    def __init__(self, folder: str, limit: int, over, every: float = 0.25):
        self.folder, self.limit, self.over, self.every = folder, limit, over, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="autograder-scratch-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            used = scratch_usage(self.folder, self.limit)
            if used is None or used > self.limit:
                amount = f"{SCRATCH_MOST_ENTRIES} files" if used is None else f"{self.limit / 2**30:g} GiB of files"
                self.over(f"the submission wrote more than {amount} (the limit of its scratch folder); they were removed")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def empty_folder(folder: str) -> None:
    """Remove what the submission wrote into its scratch folder (the folder stays)."""
    for entry in list(os.scandir(folder)) if os.path.isdir(folder) else []:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _loops_alike(cells: list[Cell], looped: int) -> dict[int, str]:
    """The later cells that would run cell ``looped``'s endless loop again, directly or through the
    notebook's functions, each with why it is skipped; cells that only define still run."""
    trees = {}
    for cell in cells:
        with contextlib.suppress(SyntaxError, ValueError):
            trees[cell.index] = ast.parse(strip_magics(cell.source))

    def used(node) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}

    defined = {d.name: d for tree in trees.values() for d in tree.body
               if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    label = next(c.name for c in cells if c.index == looped)
    roots = used(trees[looped]) & defined.keys() if looped in trees else set()
    via = {name: name for name in roots}  # a tainted name -> the name the looping cell used
    while more := {n: via[next(iter(sorted(used(d) & via.keys())))] for n, d in defined.items()
                   if n not in via and used(d) & via.keys()}:
        via.update(more)
    notes = {}
    for cell in cells:
        tree = trees.get(cell.index)
        if cell.index <= looped or tree is None or all(
                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
                or isinstance(s, (ast.Assign, ast.AnnAssign)) and not any(isinstance(n, ast.Call) for n in ast.walk(s))
                for s in tree.body):
            continue
        name = min(used(tree) & via.keys(), default=None)
        if name is not None:
            chain = name if via[name] == name else f"{name}, which uses {via[name]}"
            notes[cell.index] = f"skipped: it uses {chain}, which ran past the time limit in {label}"
    return notes


class Worker:
    """One worker process with the submission loaded."""

    def __init__(self, cells: list[Cell], device: str, settings: Settings, keep_outputs: bool = False,
                 preload: Sequence[Preload] = ()):
        self.cells, self.device, self.settings, self.limits = cells, device, settings, settings.limits
        oslayer.force_portable(settings.portable)  # the whole process's path, the grader's as the worker's
        self.preload: tuple[Preload, ...] = tuple(preload)  # run here before the first cell
        self.keep_outputs = keep_outputs  # each cell's printed output in the load report (nbgrader)
        self.give_up_at = time.monotonic() + self.limits.total_seconds
        self.confinement: dict = {}  # the fences the worker reported (confinement.py)
        self.proc: subprocess.Popen | None = None
        self.fatal: dict[int, str] = {}  # cell index -> why it is skipped
        self.loaded: list[dict] | None = None  # per cell of the last load: index, name, status, error
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._workdir = tempfile.TemporaryDirectory(prefix="autograder-", ignore_cleanup_errors=True)
        # Marks of the worker's processes, so that only they are ended.
        self._token = uuid.uuid4().hex  # in the environment of everything the worker starts
        self._sessions: set[int] = set()  # each worker leads a session its children stay in
        self._filters = seccomp_filters("self")
        self.scratch_full: str | None = None  # why the watch ended a process, until reported
        # The stage being graded: its copy of the loaded worker, its clock, why it ended early.
        self.stage_pid: int | None = None
        self.stage_in_place = False  # the portable fallback: the loaded worker answers the stage itself
        self.stage_deadline = 0.0
        self._stage_failure: StageAborted | None = None
        # The scratch watch's thread ends processes too: both take turns on proc and stage_pid.
        self._processes = threading.Lock()
        self._watch = ScratchWatch(self._workdir.name, self.limits.scratch_bytes, self._scratch_over)
        # One memory and task budget for the worker and all it starts, joined before any student code.
        self._budget = cgroups.Budget(self.limits.memory_bytes if device == "cpu" else None) if oslayer.is_linux() else None

    # -- life cycle ---------------------------------------------------------------------
    def _spawn(self) -> bool:
        """A fresh worker; whether it joined its control groups."""
        scratch = self._workdir.name
        self._stderr.seek(0)
        self._stderr.truncate()
        oslayer.become_subreaper()
        proc = None
        server = launch.fork_server if self.device == "cpu" else None  # one that died raises ForkServerError
        if server is not None:
            try:
                env = worker_environment(scratch, self.device, self.settings, server.pid, self._token)
                proc = server.spawn(env, scratch, self._stderr.fileno())
            except ForkServerError:
                stop_fork_server()  # workers start afresh from now on
        if proc is None:
            env = worker_environment(scratch, self.device, self.settings, os.getpid(), self._token)
            proc = subprocess.Popen(
                [sys.executable, "-I", "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, cwd=scratch, env=env, start_new_session=True)
        self._sessions.add(proc.pid)
        budgeted = self._budget is not None and self._budget.add(proc.pid)
        if oslayer.is_posix():  # requests are written with a deadline: a worker that stops reading cannot block us
            os.set_blocking(proc.stdin.fileno(), False)
        with self._processes:
            self.proc, self.scratch_full = proc, None
        return budgeted

    def _startup_failure(self, why: str) -> RuntimeError:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return RuntimeError(f"the grading worker could not start ({why})" + (f":\n{tail}" if tail else ""))

    def start(self) -> list[dict]:
        """Start a worker and load the submission, skipping cells that killed earlier ones."""
        from autograder.sandbox import wire

        for _ in range(len(self.cells) + 1):
            self.kill()
            budgeted = self._spawn()
            self.reader = wire.Reader(self.proc.stdout.fileno())
            run_preloads(self.preload)  # while the worker still imports
            running = None
            try:
                ready = self.reader.read(time.monotonic() + 120)
                if not isinstance(ready, dict) or ready.get("event") != "ready":
                    raise wire.WireError("unexpected first message")
                self.confinement = ready.get("confinement") if isinstance(ready.get("confinement"), dict) else {}
                if budgeted:  # the grader's fence, not the worker's word
                    self.confinement = {**self.confinement, "cgroup": self._budget.describe()}
                if refusal := confinement_refusal(self.confinement, self.settings):
                    raise RuntimeError(refusal)
                cells = [{"index": c.index, "name": c.name, "source": c.source}
                         for c in self.cells if c.index not in self.fatal]
                self._send({"op": "load_submission", "cells": cells, "outputs": self.keep_outputs},
                           time.monotonic() + 120)
                while True:
                    if time.monotonic() >= self.give_up_at:
                        raise RuntimeError(self._over_time("loading the notebook"))
                    message = self.reader.read(min(time.monotonic() + self.limits.cell_seconds, self.give_up_at))
                    if message.get("event") == "cell":
                        running = int(message["index"])
                    elif message.get("event") == "loaded":
                        self.loaded = self._merge(message)
                        return self.loaded
                    else:
                        raise wire.WireError("unexpected message while loading")
            except (wire.WireError, OSError, AttributeError, KeyError, TypeError, ValueError) as exc:
                if time.monotonic() >= self.give_up_at:
                    raise RuntimeError(self._over_time("loading the notebook")) from None
                if running is None or running in self.fatal:
                    raise self._startup_failure(str(exc)) from None
                full = self._scratch_note()
                if isinstance(exc, wire.WireTimeout) and not full:
                    for index, why in _loops_alike(self.cells, running).items():
                        self.fatal.setdefault(index, why)
                why = full or (f"stopped after {self.limits.cell_seconds:g} s (an endless loop?)"
                               if isinstance(exc, wire.WireTimeout) else
                               "ended the grading process (sys.exit in a thread, os._exit, os.kill or a crash)")
                self.fatal[running] = f"{why}; skipped, the other cells still ran"
        raise RuntimeError("every cell of the submission ended the grading process")

    def _over_time(self, doing: str) -> str:
        return (f"the grading's overall time limit ({self.limits.total_seconds:g} s) ran out while {doing}; "
                "look for slow cells (long loops, training runs) and move them out of the notebook")

    def _merge(self, message: dict) -> list[dict]:
        cells = [c for c in message.get("cells", []) if isinstance(c, dict)]
        names = {c.index: c.name for c in self.cells}
        for cell in cells:  # every message names a cell as the student finds it (loader.cell_label)
            cell.setdefault("name", names.get(cell.get("index"), ""))
        for index, why in self.fatal.items():
            cells.append({"index": index, "name": names.get(index, ""), "status": "error",
                          "error": {"kind": "fatal", "type": "", "message": why, "where": names.get(index, "")}})
        cells.sort(key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)
        return cells

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        with self._processes:
            proc, self.proc, self.stage_pid = self.proc, None, None
        if proc is None:
            return
        oslayer.kill_process_tree(proc)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        end_stray_processes(belongs=self._from_worker)

    def _from_worker(self, pid: int) -> bool:
        """Whether a child of this process descends from one of this Worker's processes."""
        return descends_from_worker(pid, self._sessions, self._filters, self._token)

    def _scratch_over(self, why: str) -> None:
        """The watch's action (its thread): end the stage's copy, else the worker; empty the folder."""
        with self._processes:
            self.scratch_full = why
            if self.stage_pid is not None and not self.stage_in_place:
                self.kill_stage_copy(self.stage_pid)
            elif self.proc is not None:
                oslayer.kill_process_tree(self.proc)
        empty_folder(self._workdir.name)

    def _scratch_note(self) -> str | None:
        note, self.scratch_full = self.scratch_full, None
        return note

    def close(self) -> None:
        self._watch.stop()
        self.kill()
        if self._budget is not None:
            self._budget.close(belongs=self._from_worker)
        self._stderr.close()
        self._workdir.cleanup()

    # -- stages -------------------------------------------------------------------------
    def _send(self, obj, deadline: float) -> None:
        from autograder.sandbox import wire

        wire.write(self.proc.stdin.fileno(), obj, deadline)

    def kill_stage_copy(self, pid: int) -> None:
        """Kill the stage's copy and its group, if it is still the loaded worker's child."""
        found = oslayer.parent_and_group(pid) if self.proc is not None else None
        if found is not None and found[0] == self.proc.pid:
            if found[1] == pid:
                oslayer.kill_group(pid)
            oslayer.kill_pid(pid)

    def begin_stage(self, number: int) -> None:
        """Start a stage's clock in a fresh copy of the loaded worker, reseeded: the same grade
        alone (``make test STAGE=4``) or after others."""
        from autograder.sandbox import wire

        self.end_stage()
        began = time.monotonic()
        self._stage_failure = (StageAborted(self._over_time("grading"), "the stages before this one took the time")
                               if began >= self.give_up_at else None)
        if self._stage_failure is not None or not self.alive:
            return
        forking = min(began + 120, self.give_up_at)  # a fork may wait on a busy machine: not the stage's time
        stage, forked = None, None
        with contextlib.suppress(wire.WireError, OSError):
            self._send({"op": "fork_stage", "seed": int(number)}, forking)
            forked = self.reader.read(forking)
            if isinstance(forked, dict) and forked.get("event") == "stage":
                pid, in_place = forked.get("pid"), forked.get("in_place") is True
                # The worker's word, checked: in place the loaded worker itself, else its child leading its own group.
                if type(pid) is int and pid > 1 and (
                        pid == self.proc.pid if in_place else oslayer.parent_and_group(pid) == (self.proc.pid, pid)):
                    stage, self.stage_in_place = pid, in_place
        if stage is None:
            self.kill()  # the next stage loads afresh
            if forked is not None:
                self._stage_failure = StageAborted(
                    "the grading process named a process that is not its stage's copy",
                    "the notebook changed what os.getpid (or the grader's channel) reports; leave os alone")
            return
        with self._processes:
            self.stage_pid, self.scratch_full = stage, None
        self.stage_deadline = min(time.monotonic() + self.limits.stage_seconds, self.give_up_at)

    def end_stage(self, ask: bool = True, synced: bool = False) -> None:
        """End the stage (its copy killed; in place, the loaded worker asked when ``ask``) and every
        process it started, and skip what it left half-written in the channel (``synced``: nothing)."""
        from autograder.sandbox import wire

        with self._processes:
            pid, self.stage_pid = self.stage_pid, None
        if pid is None or not self.alive:
            return
        if not self.stage_in_place:
            with self._processes:
                self.kill_stage_copy(pid)
            end_stray_processes(known={self.proc.pid}, belongs=self._from_worker)
        elif ask:
            try:
                self._send({"op": "end_stage"}, time.monotonic() + 2)
            except (wire.WireError, OSError):
                ask = False
        # The loaded worker says the stage is over once it collected the copy (in place: once asked).
        stuck = self.stage_in_place and not ask  # in place, the loaded worker itself stopped answering
        over = min(time.monotonic() + (10 if self.stage_in_place else 120), self.give_up_at)
        if stuck or not synced and not self.reader.skip_to(wire.STAGE_OVER, over):
            self.kill()

    def request(self, req: dict) -> dict:
        from autograder.sandbox import wire

        if not self.alive or self.stage_pid is None:
            if self._stage_failure is not None:
                raise self._stage_failure
            full = self._scratch_note()
            raise ended_the_stage(full) if full else StageAborted(
                "the grading process for this stage had already stopped")
        try:
            self._send(req, self.stage_deadline)
            answer = self.reader.read(self.stage_deadline)
        except (wire.WireError, OSError) as exc:
            answer = exc
        if isinstance(answer, dict) and answer != wire.STAGE_OVER_EVENT:
            return answer
        # The stage is over: its process died (between two frames: "stage over"), ran out of time or sent a bad frame.
        self.end_stage(ask=False, synced=answer == wire.STAGE_OVER_EVENT)
        if isinstance(answer, wire.WireTimeout):
            if time.monotonic() >= self.give_up_at:
                raise StageAborted(self._over_time("grading"), "look for slow code in this stage")
            raise over_the_stage_time_limit(self.limits.stage_seconds)
        if isinstance(answer, wire.BadFrame):
            raise StageAborted(f"the submission sent an output the grader cannot check ({answer})",
                               "return tensors of the documented shape")
        if isinstance(answer, (dict, Exception)):
            raise ended_the_stage(self._scratch_note())
        raise StageAborted("the grading process sent a malformed answer")
