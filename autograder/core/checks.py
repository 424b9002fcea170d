"""Checks: functions of a :class:`~autograder.core.submission.Submission` that return when the
submission is right and raise :class:`~autograder.core.failures.CheckFailure` (with a hint)
when it is not. The same check runs from the CLI, the notebook, nbgrader and CI.

Each check declares its identity (``"4.3"``: stage 4, check 3) and its weight where it is
written; the stage's points (the course's, :mod:`autograder.core.course`) are split over its
checks in proportion to their weights::

    @check("4.3", 4, "equals causal scaled dot-product attention on the grader's weights")
    def oracle(sub): ...

Ids are never derived from order, so adding a check renumbers nothing that results.json,
JUnit, feedback or the tests key on.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.core.chapter import Chapter, Stage

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

    @property
    def order(self) -> tuple[int, int]:
        stage, k = _ID.fullmatch(self.id).groups()
        return int(stage), int(k)


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


def collect(chapter: Chapter, modules: Mapping[int, ModuleType]) -> dict[int, tuple[Check, ...]]:
    """The marked functions of each stage's module (by stage number) as the chapter's checks, per
    stage, in id order, each worth its weight (:func:`scaled` gives them the stage's points). A
    check numbered for another stage than its module's, or a stage without checks, is an error."""
    found: dict[str, Check] = {}
    for number, module in modules.items():
        for fn in vars(module).values():
            spec = getattr(fn, "check_spec", None)
            if not isinstance(spec, CheckSpec) or getattr(fn, "__module__", None) != module.__name__:
                continue
            if spec.id in found:
                raise ValueError(f"{chapter.id}: check {spec.id} is declared twice")
            if int(spec.id.split(".")[0]) != number:
                raise ValueError(f"{chapter.id}: check {spec.id} is declared in {module.__name__}, the module "
                                 f"of stage {number}")
            found[spec.id] = Check(chapter.declared_stage(number), spec.id, spec.title, spec.weight, fn)
    by_stage: dict[int, list[Check]] = {number: [] for number in modules}
    for chk in sorted(found.values(), key=lambda c: c.order):
        by_stage[chk.stage.number].append(chk)
    empty = [modules[n].__name__ for n, checks in by_stage.items() if not checks]
    if empty:
        raise ValueError(f"{chapter.id}: {', '.join(empty)} declares no @check")
    return {number: tuple(checks) for number, checks in by_stage.items()}


def scaled(checks: tuple[Check, ...], stage_points: float) -> tuple[Check, ...]:
    """``checks`` (each worth its weight) sharing ``stage_points`` by weight. Shares are rounded
    to 1e-6 and the last check takes what rounding left, so the stage adds up exactly."""
    if not checks:
        return ()
    total = sum(c.points for c in checks)
    shares = [round(stage_points * c.points / total, 6) for c in checks[:-1]]
    shares.append(round(stage_points - sum(shares), 6))
    return tuple(replace(c, points=share) for c, share in zip(checks, shares))
