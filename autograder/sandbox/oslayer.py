"""What the sandbox needs from the operating system; without a Linux piece (macOS, Windows, the
``portable`` setting) grading stays correct with less isolation."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
import time

forced_portable = False  # the fallback, forced on this whole process by the settings; never switched back


def force_portable(wanted: bool) -> None:
    global forced_portable
    forced_portable = forced_portable or bool(wanted)


def is_linux() -> bool:
    """The Linux pieces (prctl, /proc, seccomp, Landlock) may be used."""
    return sys.platform.startswith("linux") and not forced_portable


def is_posix() -> bool:
    """The POSIX pieces (resource, process groups, select on pipes, signals by number) may be used."""
    return os.name == "posix" and not forced_portable


def die_with_parent(signal_number: int = 9) -> None:
    """The kernel kills this process when its parent dies, even by SIGKILL (Linux only)."""
    if is_linux():
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal_number, 0, 0, 0)  # PR_SET_PDEATHSIG


def become_subreaper() -> None:
    """Orphans of the worker (a daemon it forked) are re-parented to us, so we can end them."""
    if is_linux():
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def set_resource_limit(name: str, value: int) -> bool:
    """``resource.setrlimit(RLIMIT_<name>, (value, value))`` where it exists; False elsewhere."""
    if not is_posix():
        return False
    import resource

    try:
        resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (value, value))
    except (AttributeError, ValueError, OSError):  # macOS refuses some address-space limits
        return False
    return True


def thread_count() -> int:
    """This process's threads (Linux)."""
    return len(os.listdir("/proc/self/task"))


def started_environment() -> set[str] | None:
    """The names of the variables this process started with (Linux), whatever it changed since."""
    try:
        with open("/proc/self/environ", "rb") as block:
            return {entry.split(b"=", 1)[0].decode("utf-8", "replace") for entry in block.read().split(b"\0") if entry}
    except OSError:
        return None


def kill_process_tree(proc) -> None:
    """End the worker (a ``subprocess.Popen``) and, where process groups exist, its session."""
    kill_group(proc.pid)
    with contextlib.suppress(OSError):
        proc.kill()


def kill_group(pgid: int) -> None:
    """SIGKILL to a process group (POSIX), never to 0, 1 or ours."""
    if is_posix() and pgid > 1 and pgid != os.getpgrp():
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def proc_stat(pid: int) -> tuple[bool, int, int] | None:
    """``(alive, parent pid, process group)`` from ``/proc`` (a zombie is not alive), or ``None``."""
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="utf-8", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return fields[0] not in ("Z", "X"), int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def parent_and_group(pid: int) -> tuple[int, int] | None:
    """``(parent pid, process group)`` of a live process (Linux), else ``None``."""
    found = proc_stat(pid) if is_linux() else None
    return found[1:] if found and found[0] else None


def kill_pid(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)


class Pump:
    """A pipe read with a deadline where ``select`` takes sockets only (Windows), by a daemon thread."""

    def __init__(self, fd: int):
        self.chunks: queue.Queue = queue.Queue()
        # its own descriptor: a closed pipe's number may be reused by the next worker's
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
            chunk = self.chunks.get(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if not chunk:
            self.chunks.put(chunk)  # closed for every later read too
        return chunk


def write_with_deadline(fd: int, data: bytes, deadline: float) -> bool:
    """A blocking write in a daemon thread; False when it has not finished by ``deadline``."""
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
