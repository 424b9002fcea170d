"""A chapter is data: its id and its stage modules, each ending with ``STAGE = StageParts(...)``.
Its course file (:mod:`autograder.core.course`) says which stages are graded, their points and the bonus."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from autograder.core import course as course_file
from autograder.core.checks import Check, collect, scaled
from autograder.core.failures import Hint

# (regular expression, hint): an exception message read against what it usually means.
ErrorHints = list[tuple[str, Hint | str]]


@dataclass(frozen=True)
class Stage:
    number: int
    id: str
    title: str
    names: tuple[str, ...]  # what the submission defines in this stage
    bonus: bool = False  # the course's (Chapter.stages): shown beside the grade, never in it

    @property
    def label(self) -> str:
        return f"Stage {self.number} ({self.id})"

    @property
    def grade_id(self) -> str:
        """The nbgrader grade_id of the stage's test cell."""
        return f"test_stage{self.number}_{self.id}"


@dataclass(frozen=True)
class StageParts:
    """A stage module's ``STAGE``: the stage and what the engine and the notebook read of it."""

    stage: Stage
    # (pattern, hint): what an exception usually means in this stage (core.hints.error_hint)
    error_hints: ErrorHints = ()
    # submission -> None, raising CheckFailure when the stage's code calls what the stage teaches
    call_policy: Callable | None = None
    # (submission, check id, failing example) -> the picture beside a failed check, or None
    exhibit: Callable | None = None


@dataclass(eq=False)
class Chapter:
    id: str  # the assignment id: nbgrader's, the notebook's file name, the Classroom test name
    title: str
    # one module per stage, in the chapter's order: its checks (@check) and its STAGE
    stage_modules: tuple[str, ...]
    # the course file make release writes (None: every stage, out of its checks' weights); a test's own course
    course_path: Path | None = None
    course_override: course_file.Course | None = None
    # (pattern, hint): what an exception means in any stage, tried after the stage's own table
    common_error_hints: ErrorHints = ()

    @cached_property
    def _modules(self) -> dict[int, tuple[object, StageParts]]:
        """Each stage module and its STAGE, by stage number."""
        found: dict[int, tuple[object, StageParts]] = {}
        for name in self.stage_modules:
            module = importlib.import_module(name)
            parts = getattr(module, "STAGE", None)
            if not isinstance(parts, StageParts):
                raise ValueError(f"{name} declares no STAGE = StageParts(...): a stage module ends with one")
            stage = parts.stage
            clash = [m.__name__ for m, p in found.values() if stage.number == p.stage.number or stage.id == p.stage.id]
            if clash:
                raise ValueError(f"{self.id}: {name} declares {stage.label}, as {clash[0]} does")
            found[stage.number] = (module, parts)
        return found

    @property
    def declared_stages(self) -> tuple[Stage, ...]:
        """Every stage the chapter has; :attr:`stages`: those the course grades, with its bonus."""
        return tuple(parts.stage for _, parts in self._modules.values())

    def parts(self, stage: Stage) -> StageParts:
        return self._modules[stage.number][1]

    @property
    def error_hints(self) -> dict[str, ErrorHints]:
        """Each stage's hint table by stage id: its own, then the chapter's common one."""
        return {p.stage.id: [*p.error_hints, *self.common_error_hints] for _, p in self._modules.values()}

    @cached_property
    def course(self) -> course_file.Course | None:
        return self.course_override or (course_file.read(self.course_path) if self.course_path is not None else None)

    @cached_property
    def stages(self) -> tuple[Stage, ...]:
        """The stages the course grades (the bonus included), in the chapter's order."""
        if self.course is None:
            return self.declared_stages
        unknown = sorted(set(self.course.stages) - {s.number for s in self.declared_stages})
        if unknown:
            raise course_file.CourseError(f"{self.id}: the course ({self.course.source}) names stages {unknown} "
                                          "that the chapter does not declare")
        return tuple(dataclasses.replace(s, bonus=self.course.stages[s.number].bonus)
                     for s in self.declared_stages if s.number in self.course.stages)

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

    @cached_property
    def _checks(self) -> dict[int, tuple[Check, ...]]:
        graded = {s.number: s for s in self.stages}
        declared = {n: collect(module, graded.get(n, parts.stage)) for n, (module, parts) in self._modules.items()}
        return {s.number: scaled(declared[s.number], self._points(s, declared[s.number])) for s in self.stages}

    def _points(self, stage: Stage, checks: tuple[Check, ...]) -> float:
        return self.course.stages[stage.number].points if self.course else sum(c.points for c in checks)

    def checks_for(self, stage: Stage) -> tuple[Check, ...]:
        return self._checks.get(stage.number, ())

    @property
    def checks(self) -> list[Check]:
        return [c for s in self.stages for c in self.checks_for(s)]

    def points(self, stage: Stage) -> float:
        """The stage's points: the course's (its checks share them by weight)."""
        return self._points(stage, self.checks_for(stage))

    @property
    def max_score(self) -> float:
        return sum(self.points(s) for s in self.graded_stages)

    def source_notebook(self, root: Path) -> Path:
        """The instructor's notebook (nbgrader source) in a checkout at ``root``."""
        return Path(root) / "solutions" / self.id / f"{self.id}.ipynb"

    def release_notebook(self, root: Path) -> Path:
        """The students' notebook (nbgrader release) in a checkout at ``root``."""
        return Path(root) / "assignments" / self.id / f"{self.id}.ipynb"
