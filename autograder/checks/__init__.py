"""The checks of every stage, registered in order: check ``N.k`` is the k-th of stage N.

A check is a function of a :class:`~autograder.submission.Submission` that returns when the
submission is right and raises :class:`~autograder.failures.CheckFailure` (with a hint) when
it is not. The same check runs from the CLI, the notebook, nbgrader and CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from autograder.stages import Stage, stage as lookup_stage


@dataclass(frozen=True)
class Check:
    stage: Stage
    number: int
    title: str
    points: float
    run: Callable

    @property
    def code(self) -> str:
        return f"{self.stage.number}.{self.number}"


REGISTRY: dict[int, list[Check]] = {}


def check(stage_id: str, points: float, title: str):
    def register(fn):
        stage = lookup_stage(stage_id)
        checks = REGISTRY.setdefault(stage.number, [])
        checks.append(Check(stage, len(checks) + 1, title, points, fn))
        return fn
    return register


def checks_for(stage: Stage) -> list[Check]:
    return REGISTRY.get(stage.number, [])


# Registration order is the numbering order.
from autograder.checks import (  # noqa: E402,F401
    s1_softmax, s2_scores, s3_self_attention, s4_causal, s5_wrapper, s6_mha, s7_gpt2, s8_efficiency,
)

for _stage_number, _checks in REGISTRY.items():
    _total = sum(c.points for c in _checks)
    assert _total == _checks[0].stage.points, (_stage_number, _total)
