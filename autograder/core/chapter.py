"""A chapter is data: its assignment id and its stage modules, one per stage.

Every front end, the Makefile (through ``CHAPTER=``) and the tests read one :class:`Chapter`;
adding a chapter is a folder under :mod:`autograder.chapters` and one registry line there.
Each stage module holds the stage's checks and ends with one :class:`StageParts`, ``STAGE``:
the stage and every part the engine and the chapter's tests read of it, each given or declared
absent with a reason (:class:`Without`), so that a part left out fails at import, never
silently. The chapter declares every stage it has; its course file (:mod:`autograder.core.course`,
written by ``make release`` from the source notebook's test cells) says which of them are
graded, each one's points and the bonus. A stage's points are split over its checks by the
weights each check declares (:func:`autograder.core.checks.check`); a chapter without a course
file grades each stage out of its checks' weights.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.core import course as course_file

if TYPE_CHECKING:
    from autograder.core.checks import Check
    from autograder.core.course import Course

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


@dataclass(frozen=True)
class Without:
    """A part a stage does not have, and why: absence is declared, never a silent default."""

    reason: str

    def __post_init__(self):
        if not self.reason.strip():
            raise ValueError("Without(reason): say why the stage has no such part")


@dataclass(frozen=True)
class StageParts:
    """One stage, whole: the stage module's ``STAGE``. Every part is required (no defaults):
    a part left out is a TypeError at import, None or an empty part a ValueError; a stage
    without a part says so with :class:`Without` and its reason."""

    stage: Stage
    # (pattern, hint): what an exception usually means in this stage (core.hints.error_hint)
    error_hints: ErrorHints | Without
    # submission -> None, raising CheckFailure when the stage's code calls what the stage
    # teaches; the engine runs it before the stage's checks (see engine.call_policy_in_force)
    call_policy: Callable | Without
    # (submission, check id, failing example's sizes) -> the picture the notebook shows beside
    # a failed check (the chapter's type, drawn by the front end), or None
    exhibit: Callable | Without
    # the stage's computations written one step per statement, whose one-operation variants
    # (core.mutation.step_variants) name mistakes nobody catalogued
    programs: tuple[Callable, ...] | Without
    # the book's printed values the stage's checks compare with
    book: tuple | Without

    def __post_init__(self):
        for part in self.part_names():
            value = getattr(self, part)
            if value is None or (not isinstance(value, Without) and not callable(value) and not len(value)):
                raise ValueError(f"{self.stage.label}: the part {part} is {value!r}; give it, or declare "
                                 f"{part}=Without('why the stage has none')")

    @classmethod
    def part_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.name != "stage")

    def part(self, name: str):
        """The part ``name``, or None where the stage declares it absent."""
        value = getattr(self, name)
        return None if isinstance(value, Without) else value


def stage_parts_of(module) -> StageParts:
    """The ``STAGE`` a stage module declares, or a ValueError naming the module."""
    parts = getattr(module, "STAGE", None)
    if not isinstance(parts, StageParts):
        raise ValueError(f"{module.__name__} declares no STAGE = StageParts(...): a stage module ends with one")
    return parts


@dataclass(eq=False)
class Chapter:
    id: str  # the assignment id: nbgrader's, the notebook's file name, the Classroom test name
    title: str
    # one module per stage, in the chapter's order: its checks (@check) and its STAGE (StageParts)
    stage_modules: tuple[str, ...]
    # The course file make release writes from the source notebook (None: every declared stage,
    # out of its checks' weights); ``course_override`` replaces it (a test's own course).
    course_path: Path | None = None
    course_override: Course | None = None
    # (pattern, hint): what an exception usually means in any stage of the chapter, in its words;
    # tried after the stage's own table and before core's general one (core.hints.error_hint)
    common_error_hints: ErrorHints = ()

    # -- the stage modules ------------------------------------------------------------------
    @cached_property
    def _modules(self) -> dict[int, object]:
        """The stage modules by stage number, each declaring one stage no other declares."""
        modules: dict[int, object] = {}
        for name in self.stage_modules:
            module = importlib.import_module(name)
            stage = stage_parts_of(module).stage
            clash = [m.__name__ for m in modules.values()
                     if stage_parts_of(m).stage.number == stage.number or stage_parts_of(m).stage.id == stage.id]
            if clash:
                raise ValueError(f"{self.id}: {name} declares {stage.label}, as {clash[0]} does")
            modules[stage.number] = module
        return modules

    @property
    def declared_stages(self) -> tuple[Stage, ...]:
        """Every stage the chapter has; :attr:`stages`: those the course grades."""
        return tuple(stage_parts_of(m).stage for m in self._modules.values())

    def parts(self, stage: Stage) -> StageParts:
        return stage_parts_of(self._modules[stage.number])

    @property
    def error_hints(self) -> dict[str, ErrorHints]:
        """The hint table each stage's errors are read against, by stage id: the stage's own
        (none where it declares none), then the chapter's :attr:`common_error_hints`."""
        return {s.id: [*(self.parts(s).part("error_hints") or ()), *self.common_error_hints]
                for s in self.declared_stages}

    # -- the course -----------------------------------------------------------------------
    @cached_property
    def course(self) -> Course | None:
        """The course in force (None: a chapter without a course file)."""
        if self.course_override is not None:
            return self.course_override
        return course_file.read(self.course_path) if self.course_path is not None else None

    @cached_property
    def stages(self) -> tuple[Stage, ...]:
        """The stages the course grades (the bonus included), in the chapter's order."""
        if self.course is None:
            return self.declared_stages
        declared = {s.number for s in self.declared_stages}
        unknown = sorted(set(self.course.stages) - declared)
        if unknown:
            raise course_file.CourseError(f"{self.id}: the course ({self.course.source}) names stages {unknown} "
                                          "that the chapter does not declare")
        return tuple(s for s in self.declared_stages if s.number in self.course.stages)

    def declared_stage(self, number: int) -> Stage:
        for stage in self.declared_stages:
            if stage.number == number:
                return stage
        raise KeyError(f"no stage {number} declared in {self.id}")

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

    @property
    def graded_stages(self) -> list[Stage]:
        return [s for s in self.stages if not s.bonus]

    # -- checks ---------------------------------------------------------------------------
    @cached_property
    def _checks(self) -> dict[int, tuple[Check, ...]]:
        from autograder.core.checks import collect, scaled

        declared = collect(self, self._modules)
        return {s.number: scaled(declared.get(s.number, ()), self._stage_points(s, declared)) for s in self.stages}

    def _stage_points(self, stage: Stage, declared: dict[int, tuple[Check, ...]]) -> float:
        if self.course is None:
            return sum(c.points for c in declared.get(stage.number, ()))
        return self.course.stages[stage.number].points

    def checks_for(self, stage: Stage) -> tuple[Check, ...]:
        return self._checks.get(stage.number, ())

    @property
    def checks(self) -> list[Check]:
        return [c for s in self.stages for c in self.checks_for(s)]

    def points(self, stage: Stage) -> float:
        """The stage's points: the course's (its checks share them by weight)."""
        return self._stage_points(stage, {stage.number: self.checks_for(stage)})

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
