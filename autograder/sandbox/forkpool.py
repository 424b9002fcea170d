"""This process's fork server (:mod:`autograder.sandbox.forkserver`), which CPU workers start from."""

from __future__ import annotations

import atexit
import subprocess
import tempfile

from autograder.sandbox import forkserver, oslayer
from autograder.sandbox.launch import environment_is_clean, worker_environment
from autograder.sandbox.settings import Settings

_fork_server: forkserver.ForkServer | None = None  # once start_fork_server() has started one
_fork_server_scratch: tempfile.TemporaryDirectory | None = None


def start_fork_server(settings: Settings | None = None, here: bool = False) -> bool:
    """Start the fork server (``here``: as a fork of this process); False where it cannot run."""
    global _fork_server, _fork_server_scratch

    settings = settings or Settings()
    oslayer.force_portable(settings.portable)
    if _fork_server is not None and _fork_server.alive:
        return True
    if not forkserver.available():
        return False
    _fork_server_scratch = tempfile.TemporaryDirectory(prefix="autograder-forkserver-", ignore_cleanup_errors=True)
    env = worker_environment(_fork_server_scratch.name, "cpu", settings)
    try:
        _fork_server = forkserver.ForkServer(env, _fork_server_scratch.name, None if settings.debug else subprocess.DEVNULL, here)
    except OSError:
        _fork_server = None
        return False
    atexit.register(stop_fork_server)
    return True


def fork_server_here(settings: Settings) -> bool:
    """The server forked from this process once it imported PyTorch (one import per grading); only where a
    worker may see all it holds: the clean environment (launch.restart_clean), one thread, no check or secret read."""
    if not (forkserver.available() and environment_is_clean()):
        return False
    import torch

    if torch.cuda.is_initialized() or oslayer.thread_count() != 1:
        return False  # a fork copies one thread: another's locks would stay held in the server
    return start_fork_server(settings, here=True)


def stop_fork_server() -> None:
    global _fork_server
    server, _fork_server = _fork_server, None
    if server is not None:
        server.close()


def fork_server_for(device: str) -> forkserver.ForkServer | None:
    """The server, when it can start this worker (a CPU one); one that died fails to answer (ForkServerError)."""
    return _fork_server if device == "cpu" else None


def fork_server_pids() -> set[int]:
    """The fork server's pid, while one runs: a child of this process that is no stray."""
    server = _fork_server
    return {server.pid} if server is not None else set()
