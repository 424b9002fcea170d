"""No stray processes after a grading: the worker's orphans become this process's children
(:func:`oslayer.become_subreaper`) and are ended."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from autograder.sandbox import launch, oslayer


def children_of(pid: int) -> set[int]:
    """The pids whose parent is ``pid``, zombies too (read from ``/proc``; empty where there is none)."""
    found = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()} if os.path.isdir("/proc") else set()
    return {child for child in found if (oslayer.proc_stat(child) or (0, 0))[1] == pid}


def seccomp_filters(pid: int | str) -> int | None:
    """How many seccomp filters the process carries (``None``: unknown): more than the grader's
    means it comes from a worker, whatever it did since (a filter cannot be removed)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Seccomp_filters:"):
                return int(line.split()[1])
    return None


def descends_from_worker(pid: int, sessions: set[int], filters: int | None, token: str) -> bool:
    """Whether ``pid`` comes from a worker: its session, its seccomp filters or its environment says so."""
    try:
        if os.getsid(pid) in sessions:
            return True
    except OSError:
        return False
    found = seccomp_filters(pid)
    if found is not None and filters is not None and found > filters:
        return True
    try:
        return token.encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def end_stray_processes(known: set[int] | None = None, seconds: float = 5.0, belongs=None) -> None:
    """Kill this process's children (but ``known`` ones and the fork server) that ``belongs`` accepts,
    until none is left (a dying process may have forked again)."""
    server = launch.fork_server
    known = (known or set()) | ({server.pid} if server is not None else set())
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        strays = {pid for pid in children_of(os.getpid()) - known if belongs is None or belongs(pid)}
        if not strays:
            return
        for pid in strays:
            oslayer.kill_pid(pid)
        for pid in strays:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
