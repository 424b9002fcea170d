"""How much time, memory, threads and disk a worker gets (:class:`Limits`): declared here once;
the command's options and nbgrader's settings take their defaults from it."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    cell_seconds: float = 60.0      # one notebook cell while loading
    stage_seconds: float = 60.0     # all checks of one stage
    memory_bytes: int = 8 * 2**30   # address space of the worker (CPU only: CUDA reserves far more)
    threads: int = 1
    # Stages graded at once, each in its own copy of the loaded worker (Worker.open_lane): two
    # where the grader may use two cores (cores()), else one
    lanes: int = 2
    # All the files the submission writes (its scratch folder); each file has 1 GiB at most.
    scratch_bytes: int = 2 * 2**30
    # The whole grading of one submission, loading included: below Gradescope's default
    # timeout (10 min) and the CI job's (20 min), so a grade is always written.
    total_seconds: float = 480.0


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
