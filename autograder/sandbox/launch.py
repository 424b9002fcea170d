"""What a worker starts with (its boot line, its environment with the handshake, this process's fork
server that CPU workers start from), and whether its fences let the grading go on."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile

from autograder.sandbox import forkserver, oslayer
from autograder.sandbox.child import HANDSHAKE, PACKAGE_PARENT
from autograder.sandbox.settings import SOURCES, Settings

# -I: no user site, PYTHONPATH or current directory, so a torch.py beside the submission cannot
# shadow the real one; the package's folder goes last, for a checkout that is not installed.
BOOT = (f"import sys; sys.path.append({PACKAGE_PARENT!r}); "
        "from autograder.sandbox.child import main; main()")
# The grader's variables the worker gets (tokens and secrets stay out); CUDA's and the locale's by prefix.
_PASSED_ON = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH")
_PASSED_ON_PREFIXES = ("LC_", "CUDA_", "NVIDIA_")
# What a grading command keeps of its caller's environment (restart_clean): the worker's, its
# settings', the console's and CI's summary file. OMP_NUM_THREADS is set to 1: the grader computes
# on one thread, and torch then starts none, so the grader can fork the workers' server.
_GRADER_KEEPS = (*_PASSED_ON, "HOME", "TMPDIR", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
                 "GITHUB_STEP_SUMMARY", "OMP_NUM_THREADS", *(variable for _, variable in SOURCES.values() if variable))
RESTART = ("import runpy, sys; sys.path[:0] = {paths!r}; "
           "runpy.run_module('autograder', run_name='__main__', alter_sys=True)")


def _kept(name: str) -> bool:
    return name in _GRADER_KEEPS or name.startswith(_PASSED_ON_PREFIXES)


def environment_is_clean() -> bool:
    """Whether this process started isolated (``python -I``) with only the variables a grading
    command keeps, so that a process forked from it holds no secret of its caller's."""
    names = oslayer.started_environment()
    return (names is not None and bool(sys.flags.isolated) and os.environ.get("OMP_NUM_THREADS") == "1"
            and all(map(_kept, names | set(os.environ))))


def restart_clean(argv: list[str]) -> None:
    """Run this command again (``python -m autograder ARGV``) in a process that starts isolated with
    only the variables it needs, unless this one did; only where the grader can fork its workers."""
    # Once only: where site's start-up sets a variable (a .pth file), the restarted process is not
    # clean either; it then grades with workers started afresh instead of forks of itself.
    head, _, tail = RESTART.partition("{paths!r}")
    code = sys.orig_argv[3] if sys.orig_argv[1:3] == ["-I", "-c"] and len(sys.orig_argv) > 3 else ""
    restarted = code.startswith(head) and code.endswith(tail)
    if not forkserver.available() or environment_is_clean() or restarted:
        return
    env = {name: value for name, value in os.environ.items() if _kept(name)}
    env["OMP_NUM_THREADS"] = "1"
    # PYTHONPATH's folders (an instructor's chapter package) and this package's stay importable.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + [PACKAGE_PARENT]
    os.execve(sys.executable, [sys.executable, "-I", "-c", RESTART.format(paths=paths), *argv], env)


def matplotlib_cache(scratch: str) -> str:
    """One folder per user, so the fonts are scanned once (0.5 s of CPU), not each grading; written
    before any student code, then neither readable nor writable behind the fences."""
    folder = os.path.join(os.path.expanduser("~"), ".cache", "autograder-matplotlib")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return scratch
    return folder if os.access(folder, os.W_OK) else scratch


def worker_environment(scratch: str, device: str, settings: Settings, grader_pid: int | None = None,
                       token: str = "") -> dict:
    """The whole environment of a worker (or fork server): the handshake is all it learns of the grader."""
    env = {k: v for k, v in os.environ.items() if k in _PASSED_ON or k.startswith(_PASSED_ON_PREFIXES)}
    # Caches and temporary files go to the scratch folder, the only place the worker may write.
    env.update(MPLBACKEND="Agg", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               HOME=scratch, TMPDIR=scratch, MPLCONFIGDIR=matplotlib_cache(scratch), XDG_CACHE_HOME=scratch,
               OMP_NUM_THREADS="1")
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    env[HANDSHAKE] = json.dumps({
        "grader_pid": grader_pid or os.getpid(), "device": device, "memory_bytes": settings.limits.memory_bytes if device == "cpu" else 0,
        "token": token, "fences": settings.fences, "debug": settings.debug, "portable": settings.portable})
    return env


def confinement_refusal(fences, settings: Settings) -> str | None:
    """Why grading must not go on: confinement is required and the worker could not fence itself in."""
    from autograder.sandbox.confinement import describe, is_confined

    fences = fences if isinstance(fences, dict) else None
    if not settings.require_confinement or is_confined(fences):
        return None
    return (f"confinement is required (AUTOGRADER_REQUIRE_CONFINEMENT), but the grading worker is {describe(fences)}: "
            "refusing to run the submission without its fences (Linux 5.13+ with Landlock and seccomp is needed; "
            "docs/security.md: macOS, Windows and containers)")


# Once start_fork_server() has started one: CPU workers start from it, and it is a child of this
# process that is no stray (strays.end_stray_processes).
fork_server: forkserver.ForkServer | None = None
_fork_server_scratch: tempfile.TemporaryDirectory | None = None


def start_fork_server(settings: Settings | None = None, here: bool = False) -> bool:
    """Start the fork server (``here``: as a fork of this process); False where it cannot run."""
    global fork_server, _fork_server_scratch

    settings = settings or Settings()
    oslayer.force_portable(settings.portable)
    if fork_server is not None and fork_server.alive:
        return True
    if not forkserver.available():
        return False
    _fork_server_scratch = tempfile.TemporaryDirectory(prefix="autograder-forkserver-", ignore_cleanup_errors=True)
    env = worker_environment(_fork_server_scratch.name, "cpu", settings)
    try:
        fork_server = forkserver.ForkServer(env, _fork_server_scratch.name, None if settings.debug else subprocess.DEVNULL, here)
    except OSError:
        fork_server = None
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
    global fork_server
    server, fork_server = fork_server, None
    if server is not None:
        server.close()
