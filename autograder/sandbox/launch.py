"""What a worker starts with: its boot line, its environment, and whether the grader may go
on once it has said which fences it holds (``AUTOGRADER_REQUIRE_CONFINEMENT``)."""

from __future__ import annotations

import os
from pathlib import Path

from autograder.sandbox import (
    TEST_CELLS_OFF,  # in the worker's environment: test cells do not grade there
    oslayer,
)
from autograder.sandbox.limits import Limits

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
# -I: no user site, no PYTHONPATH, no current directory on sys.path, so a stray torch.py
# beside the submission cannot shadow the real module. The package's own folder goes
# last on the path, for a checkout that is not pip-installed.
BOOT = (f"import sys; sys.path.append({PACKAGE_PARENT!r}); "
        "from autograder.sandbox.child import main; main()")
# Set by the Gradescope bundle and the CI workflow: grading without fences is refused (exit 2).
REQUIRE_CONFINEMENT = "AUTOGRADER_REQUIRE_CONFINEMENT"
# Variables of the grader's environment the worker gets (the rest, tokens and secrets
# included, stays out); CUDA's and the locale's by prefix. AUTOGRADER_TEST_MARK lets the
# repository's tests find the worker's processes.
_PASSED_ON = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "AUTOGRADER_DEBUG", "AUTOGRADER_TEST_MARK",
              "AUTOGRADER_TEST_FENCES_OFF", oslayer.PORTABLE)
_PASSED_ON_PREFIXES = ("LC_", "CUDA_", "NVIDIA_")


def worker_environment(scratch: str, device: str, limits: Limits) -> dict:
    """The whole environment of a worker (and of the fork server its copies come from)."""
    env = {k: v for k, v in os.environ.items() if k in _PASSED_ON or k.startswith(_PASSED_ON_PREFIXES)}
    # Caches and temporary files go to the scratch folder, the only place the worker may write.
    env.update(MPLBACKEND="Agg", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               HOME=scratch, TMPDIR=scratch, MPLCONFIGDIR=scratch, XDG_CACHE_HOME=scratch,
               AUTOGRADER_GRADER_PID=str(os.getpid()), **{TEST_CELLS_OFF: "1"},
               AUTOGRADER_DEVICE=device,
               AUTOGRADER_THREADS=str(limits.threads), OMP_NUM_THREADS=str(limits.threads))
    if device == "cpu":
        env["AUTOGRADER_MEMORY_LIMIT"] = str(limits.memory_bytes)
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def confinement_refusal(fences) -> str | None:
    """Why grading must not go on, when ``AUTOGRADER_REQUIRE_CONFINEMENT=1`` and the worker
    could not fence itself in (no Landlock or seccomp, not Linux, or switched off)."""
    from autograder.sandbox.confinement import describe, is_confined

    if os.environ.get(REQUIRE_CONFINEMENT) != "1" or is_confined(fences if isinstance(fences, dict) else None):
        return None
    return (f"{REQUIRE_CONFINEMENT}=1, but the grading worker is {describe(fences if isinstance(fences, dict) else None)}: "
            "refusing to run the submission without its fences (Linux 5.13+ with Landlock and seccomp is needed; "
            "docs/security.md: macOS, Windows and containers)")
