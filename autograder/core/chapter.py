"""A chapter is data: its assignment id, its stages and the modules that declare its checks.

Every front end, the Makefile (through ``CHAPTER=``) and the tests read one :class:`Chapter`;
adding a chapter is a folder under :mod:`autograder.chapters` and one registry line there.
A stage's points are the sum of its checks' points (declared with
:func:`autograder.core.checks.check`); nothing else states them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.core.checks import Check

# (regular expression, hint): an exception message read against what it usually means.
ErrorHints = list[tuple[str, str]]


@dataclass(frozen=True)
class Stage:
    number: int
    id: str
    title: str
    names: tuple[str, ...]  # what the submission defines in this stage
    bonus: bool = False  # shown beside the grade, never in it

    @property
    def label(self) -> str:
        return f"Stage {self.number} ({self.id})"

    @property
    def grade_id(self) -> str:
        """The nbgrader grade_id of the stage's test cell."""
        return f"test_stage{self.number}_{self.id}"


@dataclass(eq=False)
class Chapter:
    id: str  # the assignment id: nbgrader's, the notebook's file name, the Classroom test name
    title: str
    stages: tuple[Stage, ...]
    check_modules: tuple[str, ...]  # imported to collect the functions marked with @check
    error_hints: Mapping[str, ErrorHints] = field(default_factory=dict)  # per stage id
    # (submission, stage) -> None, raising CheckFailure when the stage's code calls what the
    # stage teaches; the engine runs it before the stage's checks (see engine.call_policy_in_force)
    call_policy: Callable | None = None
    # "module:function" giving a failing check's attention weights for the notebook's heatmap
    # (sub, stage number, check title, failing example's sizes) -> exhibit or None; "" for none
    attention_exhibit: str = ""
    # Stage ids graded before the others, whatever their number (reports keep the chapter's
    # order): the stage that keeps the worker busiest. A freshly started worker imports what
    # the meta device needs (sandbox.child._warm_up_meta_device) while the first stage runs,
    # so that import overlaps a long stage instead of holding up the next one. Each stage runs
    # in a fresh copy of the loaded worker, reseeded for it, so the order changes no grade.
    run_first: tuple[str, ...] = ()

    # -- stages ---------------------------------------------------------------------------
    def stage(self, key: int | str) -> Stage:
        """A stage by number (4, "4") or id ("causal")."""
        if isinstance(key, str) and key.isdigit():
            key = int(key)
        for stage in self.stages:
            if key in (stage.number, stage.id):
                return stage
        valid = ", ".join(f"{s.number}/{s.id}" for s in self.stages)
        raise KeyError(f"no stage {key!r} in {self.id}; stages are {valid}")

    def select(self, keys=None) -> list[Stage]:
        """The stages named by number or id, in the chapter's order; all of them for none."""
        if not keys:
            return list(self.stages)
        wanted = {self.stage(k).number for k in keys}
        return [s for s in self.stages if s.number in wanted]

    def grading_order(self, stages: list[Stage]) -> list[Stage]:
        """``stages`` in the order they are graded: :attr:`run_first` first, then the others."""
        first = [s for key in self.run_first for s in stages if key in (s.id, s.number)]
        return first + [s for s in stages if s not in first]

    @property
    def graded_stages(self) -> list[Stage]:
        return [s for s in self.stages if not s.bonus]

    # -- checks ---------------------------------------------------------------------------
    @cached_property
    def _checks(self) -> dict[int, tuple[Check, ...]]:
        from autograder.core.checks import collect

        return collect(self, [importlib.import_module(name) for name in self.check_modules])

    def checks_for(self, stage: Stage) -> tuple[Check, ...]:
        return self._checks.get(stage.number, ())

    @property
    def checks(self) -> list[Check]:
        return [c for s in self.stages for c in self.checks_for(s)]

    def points(self, stage: Stage) -> float:
        return sum(c.points for c in self.checks_for(stage))

    @property
    def max_score(self) -> float:
        return sum(self.points(s) for s in self.graded_stages)

    # -- files ----------------------------------------------------------------------------
    def source_notebook(self, root: Path) -> Path:
        """The instructor's notebook (nbgrader source) in a checkout at ``root``."""
        return Path(root) / "solutions" / self.id / f"{self.id}.ipynb"

    def release_notebook(self, root: Path) -> Path:
        """The students' notebook (nbgrader release) in a checkout at ``root``."""
        return Path(root) / "assignments" / self.id / f"{self.id}.ipynb"

    @property
    def notebook_name(self) -> str:
        return f"{self.id}.ipynb"
