"""How much time, memory, threads and disk a worker gets (:class:`Limits`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def positive_int_from_env(name: str, default: int) -> int:
    """The positive integer in the environment variable ``name``; ``default`` when it is
    unset, empty, zero, negative or not a number."""
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass
class Limits:
    cell_seconds: float = 60.0      # one notebook cell while loading
    stage_seconds: float = 60.0     # all checks of one stage
    memory_bytes: int = 8 * 2**30   # address space of the worker (CPU only: CUDA reserves far more)
    threads: int = 1
    # Stages graded at once, each in its own copy of the loaded worker (Worker.open_lane): two
    # where the grader may use two cores, one with AUTOGRADER_LANES=1 (or one core)
    lanes: int = field(default_factory=lambda: default_lanes())
    # All the files the submission writes (its scratch folder); each file has 1 GiB at most.
    scratch_bytes: int = field(default_factory=lambda: positive_int_from_env("AUTOGRADER_SCRATCH_LIMIT", 2 * 2**30))
    # The whole grading of one submission, loading included: below Gradescope's default
    # timeout (10 min) and the CI job's (20 min), so a grade is always written.
    total_seconds: float = 480.0


def default_lanes() -> int:
    """Two lanes where this process may run on two cores or more, else one;
    ``AUTOGRADER_LANES=1`` grades one stage at a time anyway."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    wanted = positive_int_from_env("AUTOGRADER_LANES", 2)
    return max(1, min(wanted, 2, cores))
