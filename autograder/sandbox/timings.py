"""Where a grading's time goes, for ``make bench-grader`` (the ``timings`` setting): when each
phase ended and totals of what repeats, written as JSON at the end. It decides no grade."""

from __future__ import annotations

import json
import time

_file = ""  # where write() puts them, once started
_marks: dict[str, float] = {}
_totals: dict[str, float] = {}
_stages: list[dict] = []


def start(file: str) -> None:
    global _file
    _file = file


def enabled() -> bool:
    return bool(_file)


def mark(name: str, when: float | None = None) -> None:
    """The moment ``name`` happened (now, or ``when``); the first one counts."""
    if _file:
        _marks.setdefault(name, time.monotonic() if when is None else float(when))


def add(name: str, amount: float = 1.0) -> None:
    if _file:
        _totals[name] = _totals.get(name, 0.0) + amount


def totals() -> dict[str, float]:
    return dict(_totals)


def stage(record: dict) -> None:
    if _file:
        _stages.append(dict(record))


def write() -> None:
    if _file:
        mark("end")
        with open(_file, "w", encoding="utf-8") as handle:
            json.dump({"marks": _marks, "totals": _totals, "stages": _stages}, handle)
