"""Checks: functions of a submission that raise :class:`~autograder.core.failures.CheckFailure` when it is
wrong, each declaring its id (never derived from order) and weight: ``@check("4.3", 4, "title")``."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.core.chapter import Stage

_ID = re.compile(r"(\d+)\.(\d+)")


class CheckStatus(enum.Enum):
    """How a check (or a stage, from its checks) ended; ``words`` is what a person reads."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_IMPLEMENTED = "not_implemented"
    STOPPED = "stopped"  # a time limit, or the submission ended the grading process

    @property
    def words(self) -> str:
        return {"not_implemented": "not implemented yet"}.get(self.value, self.value)

    @property
    def mark(self) -> str:
        return {"passed": "✓", "failed": "✗", "not_implemented": "·", "stopped": "⏱"}[self.value]


@dataclass(frozen=True)
class CheckSpec:
    id: str
    weight: float  # relative to the stage's other checks
    title: str


@dataclass(frozen=True)
class Check:
    stage: Stage
    id: str  # "<stage>.<k>", as declared
    title: str
    points: float  # the stage's points times this check's share of the weights (before scaled: the weight)
    run: Callable


def check(check_id: str, weight: float, title: str):
    """Mark a function as the check ``check_id`` ("<stage>.<k>") weighing ``weight`` in its stage."""
    if not _ID.fullmatch(check_id):
        raise ValueError(f"a check id is '<stage>.<k>', like '4.3', not {check_id!r}")
    if not weight > 0:
        raise ValueError(f"check {check_id}: a weight is a positive number, not {weight!r}")

    def mark(fn):
        fn.check_spec = CheckSpec(check_id, weight, title)
        return fn
    return mark


def collect(module: ModuleType, stage: Stage) -> tuple[Check, ...]:
    """The marked functions of a stage's module as its checks, in id order, each worth its weight."""
    found: dict[str, Check] = {}
    for fn in vars(module).values():
        spec = getattr(fn, "check_spec", None)
        if not isinstance(spec, CheckSpec) or getattr(fn, "__module__", None) != module.__name__:
            continue
        if spec.id in found:
            raise ValueError(f"{module.__name__}: check {spec.id} is declared twice")
        if int(spec.id.split(".")[0]) != stage.number:
            raise ValueError(f"check {spec.id} is declared in {module.__name__}, the module of stage {stage.number}")
        found[spec.id] = Check(stage, spec.id, spec.title, spec.weight, fn)
    if not found:
        raise ValueError(f"{module.__name__} declares no @check")
    return tuple(sorted(found.values(), key=lambda c: tuple(int(n) for n in c.id.split("."))))


def scaled(checks: tuple[Check, ...], stage_points: float) -> tuple[Check, ...]:
    """``checks`` (each worth its weight) sharing ``stage_points`` by weight. Shares are rounded
    to 1e-6 and the last check takes what rounding left, so the stage adds up exactly."""
    total = sum(c.points for c in checks)
    shares = [round(stage_points * c.points / total, 6) for c in checks[:-1]]
    shares.append(round(stage_points - sum(shares), 6))
    return tuple(replace(c, points=share) for c, share in zip(checks, shares))
