"""How many gradings run at a time by default: the CPU cores this process may use
(``make autograde`` and ``make grade-repos`` without ``JOBS``)."""

from __future__ import annotations

import os


def default_jobs() -> int:
    """The CPU cores this process may run on (its affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
