"""Everything the sandbox needs from the operating system beyond portable Python, in one place.

Linux gives the grader its full leash: ``prctl`` (the worker dies with the grader, orphans
come back to it), ``resource`` limits, process groups (``os.killpg``), ``/proc`` (stray
processes), ``select`` on pipes (deadlines) and ``fork`` (each stage in a copy of the loaded
worker); :mod:`autograder.sandbox.confinement` adds seccomp and Landlock. macOS has all of
these but ``prctl`` and ``/proc``; Windows has none. Where a piece is missing, the portable
fallback below keeps grading correct and deterministic, with less isolation: the stages run
one after another in the loaded worker itself (a stage that ends it costs that stage, and the
next one loads the notebook again), deadlines are kept by a reader thread, and the report
says ``unconfined`` (docs/security.md: the fences, known limits).

The ``portable`` setting (:mod:`autograder.sandbox.settings`) forces the fallback on Linux too,
so the repository's tests grade through the code path Windows takes (tests/e2e/test_platforms.py).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
import time

# The fallback forced on this whole process: by a Worker or fork server whose settings ask for
# it (the grader), or by the handshake (the worker). Never switched back.
forced_portable = False


def force_portable(wanted: bool) -> None:
    global forced_portable
    forced_portable = forced_portable or bool(wanted)


def is_linux() -> bool:
    """The Linux pieces (prctl, /proc, seccomp, Landlock) may be used."""
    return sys.platform.startswith("linux") and not forced_portable


def is_posix() -> bool:
    """The POSIX pieces (resource, process groups, select on pipes, signals by number) may be used."""
    return os.name == "posix" and not forced_portable


def stages_fork() -> bool:
    """Each stage in a forked copy of the loaded worker: Linux only (macOS forbids forking a
    process that has started Apple's frameworks, which PyTorch does; Windows has no fork)."""
    return is_linux() and hasattr(os, "fork")


def die_with_parent(signal_number: int = 9) -> None:
    """The kernel kills this process when the grader dies (even by SIGKILL), so a worker
    stuck in an endless loop never outlives a grader that was stopped from outside. Linux
    only; elsewhere the worker checks on its parent when it reads a request."""
    if is_linux():
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal_number, 0, 0, 0)  # PR_SET_PDEATHSIG


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory() -> None:
    """For a stage's copy (child.py): what the stage's tensors free stays with the process for its next
    tensors (glibc's malloc: below 1 GiB from the heap, never given back). Otherwise each of
    the tens of megabytes of a 1,024-token forward pass is mapped afresh and the kernel zeroes
    it page by page: a third of each of stage 7's passes after the first. The copy ends with
    its stage, so it holds nothing longer than the stage, and its limits are the same."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
        mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
        mallopt(_M_MMAP_THRESHOLD, 2**30)
    except (AttributeError, OSError):  # not glibc: its allocator as it is
        pass


def become_subreaper() -> None:
    """Orphans of the worker (a daemon it forked) are re-parented to us, so we can end them."""
    if is_linux():
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass


def set_resource_limit(name: str, value: int) -> bool:
    """``resource.setrlimit(RLIMIT_<name>, (value, value))`` where it exists; False elsewhere."""
    if not is_posix():
        return False
    import resource

    limit = getattr(resource, f"RLIMIT_{name}", None)
    if limit is None:
        return False
    try:
        resource.setrlimit(limit, (value, value))
    except (ValueError, OSError):  # macOS refuses some address-space limits
        return False
    return True


def kill_process_tree(proc) -> None:
    """End the worker (a ``subprocess.Popen``) and, where process groups exist, its session."""
    if is_posix():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()


def kill_group(pgid: int) -> None:
    """SIGKILL to a process group (POSIX); callers check ``pgid`` first: never 0, 1 or ours."""
    if is_posix() and pgid > 1 and pgid != os.getpgrp():
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(pgid, signal.SIGKILL)


def parent_and_group(pid: int) -> tuple[int, int] | None:
    """``(parent pid, process group)`` of a live process, from ``/proc`` (Linux); ``None`` when
    it has ended, is a zombie, or cannot be read."""
    if not is_linux():
        return None
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="utf-8", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[1]), int(fields[2])) if fields[0] not in ("Z", "X") else None
    except (OSError, ValueError, IndexError):
        return None


def kill_pid(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.kill(pid, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)


def set_nonblocking(fd: int) -> None:
    if is_posix():
        os.set_blocking(fd, False)


class Pump:
    """The portable way to wait on a pipe with a deadline (``select`` takes only sockets on
    Windows): a daemon thread reads the pipe and hands the chunks over through a queue."""

    def __init__(self, fd: int):
        self.chunks: queue.Queue = queue.Queue()
        # Its own copy of the descriptor: once the worker's pipe is closed, its number may be
        # reused for the next worker's, which this thread must never read from.
        threading.Thread(target=self._run, args=(os.dup(fd),), name="autograder-pipe", daemon=True).start()

    def _run(self, fd: int) -> None:
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
                self.chunks.put(chunk)
                if not chunk:
                    return
        finally:
            os.close(fd)

    def get(self, deadline: float | None) -> bytes | None:
        """The next chunk (``b""``: the pipe closed), or ``None`` when the deadline passed."""
        try:
            if deadline is None:
                return self.chunks.get()
            return self.chunks.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None


def write_with_deadline(fd: int, data: bytes, deadline: float) -> bool:
    """The portable deadline on a blocking write: the write runs in a daemon thread; False
    when it has not finished by ``deadline`` (the reader stopped reading; it is then killed,
    which ends the write)."""
    failure: list[BaseException] = []
    own = os.dup(fd)  # as in Pump: a number reused after a close is never written to

    def write_all() -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(own, view):]
        except OSError as exc:
            failure.append(exc)
        finally:
            os.close(own)

    thread = threading.Thread(target=write_all, name="autograder-write", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if failure:
        raise failure[0]
    return not thread.is_alive()
