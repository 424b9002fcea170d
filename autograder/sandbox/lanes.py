"""A lane: where the grader grades one stage at a time (:class:`Lane`). The loaded worker's own
pipes are the main lane (``Worker.main_lane``); a second loaded copy, made before any stage's
copy (``Worker.open_lane``), is a side lane with pipes of its own, so that two stages are graded
at once. Either lane forks a fresh copy of its loader for each stage, reseeded for it, and keeps
it on the stage's clock: a stage that exits, crashes or runs out of time costs that stage only.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING

from autograder.sandbox import oslayer, timings
from autograder.sandbox.errors import StageAborted, ended_the_stage, over_the_stage_time_limit
from autograder.sandbox.strays import end_stray_processes, is_alive

if TYPE_CHECKING:
    from autograder.sandbox.worker import Worker


class Lane:
    """Where one stage at a time is graded: the loaded worker's own pipes (``Worker.main_lane``),
    or a second loaded copy's (:meth:`Worker.open_lane`). Each stage runs in a fresh copy of
    the lane's loader, reseeded for it, so a stage gets the same grade on either lane."""

    def __init__(self, worker: Worker, pipes: tuple[int, int] | None = None, loader: int | None = None):
        self.worker = worker
        self.main = pipes is None
        self._pipes = pipes  # a side lane's (write, read) ends
        self._loader = loader  # a side lane's loader pid (a child of the loaded worker)
        self._reader = None
        if pipes is not None:
            from autograder.sandbox import wire

            self._reader = wire.Reader(pipes[1])
        self.stage_pid: int | None = None  # the copy of the loader that answers this stage
        self.stage_in_place = False  # the portable fallback: the loaded worker answers the stage itself
        self.stage_over_time = False
        self._stage_over_read = False  # the loader's "stage over" frame was read as an answer
        self.stage_deadline: float | None = None
        self.scratch_full: str | None = None  # why the watch ended this lane's copy, until reported
        self._stage_failure: StageAborted | None = None  # why this stage's copy ended before its checks
        self._ended = False  # a side lane whose loader was ended or stopped answering
        self._closed = False  # a side lane whose pipes are closed
        self._greeted = False  # a side lane's loader's first frame ("lane", once warmed up) was read

    # -- the lane's ends -------------------------------------------------------------------
    @property
    def reader(self):
        return self.worker.reader if self.main else self._reader

    @property
    def loader_pid(self) -> int | None:
        if self.main:
            proc = self.worker.proc
            return proc.pid if proc is not None else None
        return self._loader

    @property
    def alive(self) -> bool:
        if self.main:
            return self.worker.alive
        return not self._ended and self.worker.alive and is_alive(self._loader)

    def _write(self, obj, deadline: float) -> None:
        from autograder.sandbox import wire

        wire.write(self.worker.proc.stdin.fileno() if self.main else self._pipes[0], obj, deadline)

    def _give_up(self) -> None:
        """The lane's loader no longer answers, or lies: on the main lane the worker is ended
        (the next stage loads afresh); a side lane ends its loader and grades nothing more."""
        if self.main:
            self.worker.kill()
            return
        self._ended = True
        with self.worker._processes:
            pid, self.stage_pid = self.stage_pid, None
            if pid is not None:
                self.kill_stage_copy(pid)
            proc, found = self.worker.proc, oslayer.parent_and_group(self._loader)
            if proc is not None and found is not None and found[0] == proc.pid:
                oslayer.kill_pid(self._loader)

    def end(self) -> None:
        """No more stages on this side lane (its loader died, or dies, with the worker)."""
        self._ended = True

    def close(self) -> None:
        """A side lane's end: its pipes closed, once (its loader then exits). Called by whoever
        grades through it, or by Worker.close."""
        if self.main or self._closed:
            return
        self._ended = self._closed = True
        for fd in self._pipes:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _over_time(self, doing: str) -> str:
        return self.worker._over_time(doing)

    def _scratch_note(self) -> str | None:
        note, self.scratch_full = self.scratch_full, None
        return note or (self.worker._scratch_note() if self.main else None)

    def is_stage_copy(self, pid) -> bool:
        """Whether ``pid`` is a copy of the lane's loader leading its own process group, as a
        stage's copy does. The loader reports the pid, after student code ran in it: the grader
        checks it in ``/proc`` before it ever signals it (never 0, 1 or the grader's own,
        whatever the worker says)."""
        loader = self.loader_pid
        return type(pid) is int and pid > 1 and loader is not None and oslayer.parent_and_group(pid) == (loader, pid)

    def kill_stage_copy(self, pid: int) -> None:
        """Kill the stage's copy and its process group, if it is still the lane's loader's
        child (if it has ended, its pid may be another process's by now)."""
        loader = self.loader_pid
        found = oslayer.parent_and_group(pid) if loader is not None else None
        if found is None or found[0] != loader:
            return
        if found[1] == pid:
            oslayer.kill_group(pid)
        oslayer.kill_pid(pid)

    # -- a stage -----------------------------------------------------------------------------
    def begin_stage(self, number: int, warm_up: bool = True) -> None:
        """Start a stage's clock in a fresh copy of the lane's loader, reseeded so that a stage
        gets the same grade whether it is graded alone (``make test STAGE=4``) or after others.
        ``warm_up``: the loader may import the meta device's modules while this copy runs."""
        from autograder.sandbox import wire

        self.end_stage()
        began = time.monotonic()
        try:
            self._begin_stage(number, warm_up, wire)
        finally:
            timings.add("fork_seconds", time.monotonic() - began)

    def _begin_stage(self, number: int, warm_up: bool, wire) -> None:
        worker = self.worker
        self._stage_failure = None
        self.stage_over_time = time.monotonic() >= worker.give_up_at
        if self.stage_over_time or not self.alive:
            return
        # A fork may wait for the loader's warm-up import (seconds on a busy machine): not the
        # stage's time, which starts once its copy is there.
        forking = min(time.monotonic() + 120, worker.give_up_at)
        stage, forked = None, None
        try:
            self._write({"op": "fork_stage", "warm_up": bool(warm_up)}, forking)
            if not self.main and not self._greeted:  # a side lane's loader first says it is there
                hello = self.reader.read(forking)
                self._greeted = isinstance(hello, dict) and hello.get("event") == "lane" \
                    and hello.get("pid") == self._loader
                if not self._greeted:
                    raise wire.WireError("the lane's loader did not greet")
            forked = self.reader.read(forking)
            if isinstance(forked, dict) and forked.get("event") == "stage":
                in_place = forked.get("in_place") is True and self.main
                if (forked.get("pid") == self.loader_pid) if in_place else self.is_stage_copy(forked.get("pid")):
                    stage, self.stage_in_place = forked["pid"], in_place
        except (wire.WireError, OSError):
            forked = None
        if stage is None:
            self._give_up()
            if forked is not None:
                self._stage_failure = StageAborted(
                    "the grading process named a process that is not its stage's copy",
                    "the notebook changed what os.getpid (or the grader's channel) reports; leave os alone")
            return
        with worker._processes:
            self.stage_pid, self.scratch_full, self._stage_failure = stage, None, None
        self.stage_deadline = min(time.monotonic() + worker.limits.stage_seconds, worker.give_up_at)
        try:
            self.request({"op": "reseed", "seed": int(number)})
        except StageAborted as exc:
            self._stage_failure = exc  # what the stage's first check reports

    def end_stage(self, ask: bool = True) -> None:
        """End this stage's copy (asked to exit when ``ask``, killed otherwise or when it does
        not), every process it started, and skip what it may have left half-written in the
        channel. The loader stays, for the next stage; if it cannot be reached, it is ended too."""
        began = time.monotonic()
        try:
            self._end_stage(ask)
        finally:
            timings.add("end_stage_seconds", time.monotonic() - began)

    def _end_stage(self, ask: bool) -> None:
        from autograder.sandbox import wire

        worker = self.worker
        with worker._processes:
            pid, self.stage_pid = self.stage_pid, None
        synced, self._stage_over_read = self._stage_over_read, False
        if pid is None or not self.alive:
            return
        if self.stage_in_place:  # the loaded worker itself: it stays unless it stopped answering
            try:
                in_step = ask and (self._write({"op": "end_stage"}, time.monotonic() + 2)
                                   or self.reader.skip_to(wire.STAGE_OVER, time.monotonic() + 10))
            except (wire.WireError, OSError):
                in_step = False
            if not in_step:
                self._give_up()
            return
        if ask:  # the loader ignores this request, should the copy have died meanwhile
            try:
                self._write({"op": "end_stage"}, time.monotonic() + 2)
            except (wire.WireError, OSError):
                ask = False
        give_up = time.monotonic() + (2 if ask else 0)
        while is_alive(pid) and time.monotonic() < give_up:
            time.sleep(0.002)
        with worker._processes:
            self.kill_stage_copy(pid)
        proc = worker.proc
        if proc is not None:
            end_stray_processes(known={proc.pid}, belongs=worker._from_worker)
        # The loader says the stage is over once it has collected the copy; after the first
        # stage's copy it may import the meta device's modules first (child._warm_up_meta_device:
        # seconds on a busy machine), so it gets the time a fork gets.
        if not synced and not self.reader.skip_to(wire.STAGE_OVER, min(time.monotonic() + 120, worker.give_up_at)):
            self._give_up()

    def request(self, req: dict) -> dict:
        from autograder.sandbox import wire

        worker = self.worker
        if self.stage_over_time:
            raise StageAborted(self._over_time("grading"), "the stages before this one took the time")
        if not self.alive or self.stage_pid is None:
            if self._stage_failure is not None:
                raise self._stage_failure
            full = self._scratch_note()
            raise ended_the_stage(full) if full else StageAborted(
                "the grading process for this stage had already stopped")
        deadline = self.stage_deadline or (time.monotonic() + worker.limits.stage_seconds)
        sent = time.monotonic()
        try:
            self._write(req, deadline)
            answer = self.reader.read(deadline)
            timings.add("round_trips")
            timings.add("round_trip_seconds", time.monotonic() - sent)
        except wire.WireTimeout:
            self.end_stage(ask=False)
            if time.monotonic() >= worker.give_up_at:
                raise StageAborted(self._over_time("grading"), "look for slow code in this stage") from None
            raise over_the_stage_time_limit(worker.limits.stage_seconds) from None
        except wire.FrameTooLarge as exc:
            self.end_stage(ask=False)
            raise StageAborted(f"the submission sent an output far too large to check ({exc})",
                               "return tensors of the documented shape") from None
        except (wire.WireError, OSError):
            self.end_stage(ask=False)
            raise ended_the_stage(self._scratch_note()) from None
        if answer == wire.STAGE_OVER_EVENT:  # the stage's process died between two frames
            self._stage_over_read = True
            self.end_stage(ask=False)
            raise ended_the_stage(self._scratch_note())
        if not isinstance(answer, dict):
            self.end_stage(ask=False)
            raise StageAborted("the grading process sent a malformed answer")
        return answer
