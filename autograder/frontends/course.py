"""``make release``'s first step: the source notebook's decision carried to the grader.

``python -m autograder.frontends.course [--chapter ID] [--root DIR]`` reads the instructor's
notebook (``solutions/<id>/<id>.ipynb``): each stage's test cell and its nbgrader ``points``
(:mod:`autograder.core.course`). It writes the chapter's course file, which every route grades
with (``make test``, nbgrader, Gradescope, Classroom 50, the students' repository), and brings
the notebook's own points table (the first cell's ``| stage | id | you write | points |``) in
line, and the README's and docs' (``| 4 | `causal` | ... | 20 |``): a row per stage of the course, its points, ``bonus`` beside a bonus
stage's. nbgrader's ``generate_assignment`` then copies the notebook, table included, into the
release.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from autograder.chapters import load
from autograder.core import course as course_file
from autograder.core.chapter import Chapter
from autograder.core.course import Course, CourseError
from autograder.frontends.reports.text import format_points

# | 4 | `causal` | `CausalAttention` | 20 |: a stage's number, its id, ..., its points last
_ROW = re.compile(r"^\|\s*(\d+)\s*\|(\s*`(\w+)`\s*\|.*)\|\s*[^|]*\|\s*$")


def points_text(course: Course, number: int) -> str:
    stage = course.stages[number]
    return format_points(stage.points) + (" bonus" if stage.bonus else "")


def _row(line: str, ids: dict[int, str]) -> re.Match | None:
    match = _ROW.match(line)
    return match if match and ids.get(int(match.group(1))) == match.group(3) else None


def points_table(text: str, chapter: Chapter, course: Course) -> str:
    """``text`` (a Markdown cell) with its stage rows' points set from ``course``: rows of stages
    outside the course dropped, a row added (after the last) for a stage the table lacks."""
    ids = {s.number: s.id for s in chapter.declared_stages}
    lines = text.split("\n")
    rows = [i for i, line in enumerate(lines) if _row(line, ids)]
    if not rows:
        return text
    shown: set[int] = set()
    out: list[str] = []
    for i, line in enumerate(lines):
        match = _row(line, ids)
        if match is None:
            out.append(line)
        else:
            number = int(match.group(1))
            if number in course.stages:
                out.append(f"| {number} |{match.group(2)}| {points_text(course, number)} |")
                shown.add(number)
        if i == rows[-1]:
            for stage in chapter.declared_stages:
                if stage.number in course.stages and stage.number not in shown:
                    names = ", ".join(f"`{name}`" for name in stage.names)
                    out.append(f"| {stage.number} | `{stage.id}` | {names} | {points_text(course, stage.number)} |")
    return "\n".join(out)


def release(chapter: Chapter, root: Path) -> list[str]:
    """Read the source notebook, write the course file and the notebook's points table; what changed."""
    source = chapter.source_notebook(root)
    course = course_file.from_notebook(source, chapter.declared_stages,
                                       source.relative_to(root).as_posix() if source.is_relative_to(root) else str(source))
    changed = []
    if course_file.write(course, chapter.course_path):
        changed.append(chapter.course_path.name)
    notebook = json.loads(source.read_text(encoding="utf-8"))
    ids = {s.number: s.id for s in chapter.declared_stages}
    edited = False
    for cell in notebook["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell.get("cell_type") != "markdown" or not any(_row(line, ids) for line in text.split("\n")):
            continue
        new = points_table(text, chapter, course)
        if new != text:
            cell["source"] = new.splitlines(keepends=True)
            edited = True
        break  # the first table of stages is the points table; later tables are the chapter's own
    if edited:
        source.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        changed.append(source.name)
    # the course repository's README and docs (students.md goes to the students) show the same table
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        new = points_table(text, chapter, course)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page.relative_to(root).as_posix())
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", default=None, help="the chapter id (default: the registry's default)")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository (default: here)")
    args = parser.parse_args(argv)
    chapter = load(args.chapter)
    if chapter.course_path is None:
        print(f"{chapter.id} has no course file: every declared stage is graded out of its checks' weights")
        return 0
    try:
        changed = release(chapter, args.root.resolve())
    except CourseError as exc:
        print(f"make release: {exc}", file=sys.stderr)
        return 2
    course = course_file.read(chapter.course_path)
    graded = sum(p.points for p in course.stages.values() if not p.bonus)
    bonus = sum(p.points for p in course.stages.values() if p.bonus)
    stages = ", ".join(f"{n}: {points_text(course, n)}" for n in sorted(course.stages))
    print(f"{chapter.id}: stages {stages}; total {format_points(graded)}"
          + (f" (+{format_points(bonus)} bonus)" if bonus else " (no bonus)")
          + ("; updated " + ", ".join(changed) if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
