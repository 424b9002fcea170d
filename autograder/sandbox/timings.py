"""Where a grading's time goes, measured in the grading process for ``make bench-grader``.

With the ``timings`` setting (``AUTOGRADER_TIMINGS=FILE``), ``python -m autograder`` starts
measuring (:func:`start`), notes when each phase ends (:func:`mark`) and adds up the repeated
ones (:func:`add`: each stage, the round trips to the worker, hypothesis's examples), and
writes them to FILE as JSON when it ends (:func:`write`). Times are ``time.monotonic()``
seconds, the clock every process of the machine shares, so the benchmark sets them against the
moment it started ``make test``. Until started every call here returns at once. It only
measures: nothing here decides a grade.
"""

from __future__ import annotations

import time

_file = ""  # where write() puts them, once started
_marks: dict[str, float] = {}
_totals: dict[str, float] = {}
_stages: list[dict] = []


def start(file: str) -> None:
    """Measure from now on, for ``file`` (nothing when it is empty)."""
    global _file
    _file = file


def enabled() -> bool:
    return bool(_file)


def mark(name: str, when: float | None = None) -> None:
    """The moment ``name`` happened (now, or ``when``); the first one counts."""
    if _file:
        _marks.setdefault(name, time.monotonic() if when is None else float(when))


def add(name: str, amount: float = 1.0) -> None:
    """Add ``amount`` (seconds, or a count) to the total ``name``."""
    if _file:
        _totals[name] = _totals.get(name, 0.0) + amount


def totals() -> dict[str, float]:
    return dict(_totals)


def stage(record: dict) -> None:
    """One stage's figures (its id, seconds, round trips, ...), in grading order."""
    if _file:
        _stages.append(dict(record))


def write() -> None:
    """Write what was measured to the file :func:`start` named (never raises)."""
    if not _file:
        return
    import json

    mark("end")
    try:
        with open(_file, "w", encoding="utf-8") as handle:
            json.dump({"marks": _marks, "totals": _totals, "stages": _stages}, handle)
    except (OSError, KeyError, TypeError, ValueError):
        pass
