"""How much time, memory, threads and disk a worker gets (:class:`Limits`): declared here once;
the command's options and nbgrader's settings take their defaults from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    cell_seconds: float = 60.0      # one notebook cell while loading
    stage_seconds: float = 60.0     # all checks of one stage
    memory_bytes: int = 8 * 2**30   # address space of the worker (CPU only: CUDA reserves far more)
    threads: int = 1
    # All the files the submission writes (its scratch folder); each file has 1 GiB at most.
    scratch_bytes: int = 2 * 2**30
    # The whole grading of one submission, loading included: below Gradescope's default
    # timeout (10 min) and the CI job's (20 min), so a grade is always written.
    total_seconds: float = 480.0

