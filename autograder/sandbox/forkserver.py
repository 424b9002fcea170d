"""Workers without the start-up: a clean process that imported PyTorch forks one worker per
submission, which fences itself in as a fresh one does. Linux only."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys

from autograder.sandbox import child, oslayer

_REQUEST_LIMIT = 1 << 20  # bytes of one request (an environment and a folder)


class ForkServerError(Exception):
    """The server could not start, or stopped answering."""


def available() -> bool:
    return oslayer.is_linux() and hasattr(os, "pidfd_open")


class ForkedProcess:
    """The part of ``subprocess.Popen`` a Worker uses; ``returncode`` is -9 once it ended (the server reaps it)."""

    def __init__(self, pid: int, pidfd: int, stdin, stdout):
        self.pid, self._pidfd, self.stdin, self.stdout = pid, pidfd, stdin, stdout
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            poller = select.poll()  # the pidfd becomes readable when the process ends
            poller.register(self._pidfd, select.POLLIN)
            if not poller.poll(None if timeout is None else max(0, int(timeout * 1000))):
                raise subprocess.TimeoutExpired("forked worker", timeout)
            self.returncode = -signal.SIGKILL
            os.close(self._pidfd)  # nothing signals it again: its number may be reused
        return self.returncode

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(0)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)


class ForkServer:
    """The grader's side: starts the server and asks it for workers."""

    def __init__(self, env: dict, cwd: str, stderr, here: bool = False):
        """``env``: a worker's, naming this process as the grader; ``here``: fork this process instead."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        boot = (f"import sys; sys.path.append({child.PACKAGE_PARENT!r}); "
                f"from autograder.sandbox.forkserver import serve; serve({theirs.fileno()})")
        try:
            if here:
                pid = _fork(_serve_here, theirs, env, cwd, stderr)
                self.proc = ForkedProcess(pid, os.pidfd_open(pid), None, None)
            else:
                self.proc = subprocess.Popen([sys.executable, "-I", "-c", boot], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=stderr, cwd=cwd, env=env,
                                             pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self.pid = self.proc.pid
        self._sock = ours
        self._sock.settimeout(120)  # the first answer waits on the server's imports, on a busy machine

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, env: dict, cwd: str, stderr_fd: int) -> ForkedProcess:
        """A fresh worker in ``cwd`` with exactly ``env`` and two new pipes, or :class:`ForkServerError`."""
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        fds: list[int] = []  # what the server sent back: the new worker's pidfd
        try:
            request = json.dumps({"env": env, "cwd": cwd}).encode()
            socket.send_fds(self._sock, [request], [to_worker_r, from_worker_w, stderr_fd])
            answer, fds, _, _ = socket.recv_fds(self._sock, _REQUEST_LIMIT, 1)
            self._sock.settimeout(30)  # the server's imports are done
            for received in fds:
                os.set_inheritable(received, False)
            pid = int(json.loads(answer)["pid"])
            if len(fds) != 1:
                raise ValueError("no pidfd")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            for fd in (to_worker_w, from_worker_r, *fds):
                os.close(fd)
            raise ForkServerError(f"the fork server stopped answering ({exc})") from None
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        return ForkedProcess(pid, fds[0], os.fdopen(to_worker_w, "wb", buffering=0),
                             os.fdopen(from_worker_r, "rb", buffering=0))

    def close(self) -> None:
        """Let the server reap its workers (their time counts as this process's), then end it."""
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        oslayer.kill_process_tree(self.proc)
        self.proc.wait()
        if isinstance(self.proc, ForkedProcess):  # forked from this process: its child, reaped here
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.proc.pid, 0)


def _fork(run, *args) -> int:
    """Fork, and in the copy ``run(*args)`` and exit."""
    pid = os.fork()
    if pid == 0:
        try:
            run(*args)
        finally:
            os._exit(70)
    return pid


# -- the server ------------------------------------------------------------------------------

def serve(fd: int) -> None:
    """The server's loop (``python -I -c``): import once, then fork a worker per request."""
    oslayer.die_with_parent()
    sock = socket.socket(fileno=fd)
    handshake = json.loads(os.environ.get(child.HANDSHAKE, "{}"))
    if os.getppid() != handshake.get("grader_pid"):
        os._exit(3)  # the grader ended before the line above took effect
    try:
        from autograder.sandbox import confinement, loader, wire, workspace  # noqa: F401

        child.pin_threads()
        child.preload_notebook_imports()
    except Exception:  # the grader reads the closed socket as no answer, and starts its workers afresh
        os._exit(1)
    gc.freeze()  # the copies' collections skip what the server imported, and leave its pages shared
    gc.enable()  # off in the grader it was forked from, while it imported
    if oslayer.thread_count() != 1:  # a fork copies one thread: another's locks would stay held in every copy
        os._exit(1)
    while True:
        try:
            request, fds, _, _ = socket.recv_fds(sock, _REQUEST_LIMIT, 5)
        except OSError:
            os._exit(0)
        if not request:  # the grading process closed its end, once its workers ended
            _reap(0)
            os._exit(0)
        _reap(os.WNOHANG)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = _fork(_become_worker, sock, request, fds)
        for received in fds:
            os.close(received)
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
        finally:
            os.close(pidfd)


def _serve_here(sock: socket.socket, env: dict, cwd: str, stderr) -> None:
    """A server forked from the grader keeps none of its files, streams or variables, then serves."""
    devnull = os.open(os.devnull, os.O_RDWR)
    _take_over(cwd, env, [devnull] * (2 if stderr is None else 3), keep=sock.fileno())
    sys.argv = ["-c"]  # as a started worker's
    serve(sock.fileno())


def _take_over(cwd: str, env: dict, stdio: list[int], keep: int = -1) -> None:
    """This fork in its own session, ``cwd`` and ``env``, with ``stdio`` as fds 0-2 and no other file
    of its parent's but ``keep`` (a fence applies to files opened after it)."""
    import tempfile

    os.setsid()
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2 and int(name) != keep:
            with contextlib.suppress(OSError):
                os.close(int(name))
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # computed again from TMPDIR, the scratch folder


def _reap(options: int) -> None:
    """Collect the workers that ended (they are the server's children); with 0, all of them."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, options)[0] != 0:
            pass


def _become_worker(sock: socket.socket, request: bytes, fds: list[int]) -> None:
    """In the fork: the request's pipes, folder and environment replace the server's; the worker's main runs."""
    sock.close()  # the copy must not be able to ask the server for anything
    asked = json.loads(request)
    _take_over(asked["cwd"], {str(k): str(v) for k, v in asked["env"].items()}, fds)
    child.main()
    os._exit(0)
