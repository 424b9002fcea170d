"""The course: which stages are graded, their points and the bonus, as the source notebook's test
cells state them (an ungraded one is a bonus); ``make release`` writes it to the course file."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.core.chapter import Stage


class CourseError(ValueError):
    """A source notebook or course file that does not say what the course is (the message says why)."""


@dataclass(frozen=True)
class StagePoints:
    points: float
    bonus: bool  # beside the grade, never in it


@dataclass(frozen=True)
class Course:
    stages: dict[int, StagePoints]  # by stage number; a stage not here is not graded
    source: str  # the notebook it was read from, as a person names it

    def to_json(self) -> str:
        rows = ",\n".join(f'    "{n}": {json.dumps({"points": p.points, "bonus": p.bonus})}'
                           for n, p in sorted(self.stages.items()))
        return f'{{\n  "source": {json.dumps(self.source)},\n  "stages": {{\n{rows}\n  }}\n}}\n'


def points_in_cells(notebook: dict, stages: tuple[Stage, ...]) -> dict[int, StagePoints]:
    """Each stage's points as the notebook's test cells state them (a stage without one is absent)."""
    by_grade_id = {s.grade_id: s for s in stages}
    found: dict[int, StagePoints] = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader") or {}
        stage = by_grade_id.get(meta.get("grade_id"))
        if stage is None:
            continue
        points = meta.get("points")
        if not isinstance(points, (int, float)) or isinstance(points, bool) or points < 0:
            raise CourseError(f"{stage.label}: its test cell ({stage.grade_id}) has no points "
                              f"(nbgrader metadata 'points', a number, got {points!r})")
        if points != int(points):  # every route records whole points (Classroom 50 must)
            raise CourseError(f"{stage.label}: its test cell ({stage.grade_id}) has {points} points: "
                              "give each stage a whole number of points")
        # an ungraded test cell with points is a bonus, beside the grade (nbgrader adds no points for it)
        found[stage.number] = StagePoints(float(points), bonus=not meta.get("grade"))
    return found


def from_notebook(path: Path, stages: tuple[Stage, ...], source: str) -> Course:
    """The course the source notebook at ``path`` states (``source``: its name in the course file)."""
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CourseError(f"cannot read the source notebook {path}: {exc}") from exc
    found = points_in_cells(notebook, stages)
    if not any(not p.bonus for p in found.values()):
        raise CourseError(f"{path}: no graded stage (no test cell with grade: true and points)")
    return Course(found, source)


def read(path: Path) -> Course:
    """The course file ``make release`` wrote."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        stages = {int(n): StagePoints(float(s["points"]), bool(s["bonus"])) for n, s in data["stages"].items()}
        return Course(stages, str(data["source"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CourseError(f"the course file {path} is missing or damaged ({exc}); `make release` writes it "
                          "from the source notebook") from exc


def write(course: Course, path: Path) -> bool:
    """Write the course file; False when it already says the same (left untouched)."""
    path = Path(path)
    text = course.to_json()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def stale_points(notebook: dict, chapter) -> str | None:
    """One sentence when a student's notebook states other points than the course (graded with the course's)."""
    course = chapter.course
    if course is None:
        return None
    theirs: dict[int, StagePoints] = {}
    for stage in chapter.declared_stages:  # cell by cell: one damaged cell must not hide the others
        with contextlib.suppress(CourseError):
            theirs.update(points_in_cells(notebook, (stage,)))
    differ = sorted(n for n in set(theirs) | set(course.stages)
                    if (theirs[n].points if n in theirs else None) != (course.stages[n].points if n in course.stages else None))
    if not differ or not theirs:
        return None

    cells = {(c.get("metadata", {}).get("nbgrader") or {}).get("grade_id") for c in notebook.get("cells", [])}
    missing = [str(s.number) for s in chapter.declared_stages if s.number in differ and s.grade_id not in cells]
    if missing:
        return (f"the test cell of stage {', '.join(missing)} is missing from this notebook: restore the test cell (copy "
                "it from the notebook you were given) to see the stage's checks there; the stage is graded all the same")

    def said(stages: dict[int, StagePoints]) -> str:
        return ", ".join(f"stage {n} {f'{stages[n].points:g}' if n in stages else 'none'}" for n in differ)

    return (f"this notebook's test cells state other points than the instructor's course ({said(theirs)} "
            f"against {said(course.stages)}): it is graded with the instructor's")

