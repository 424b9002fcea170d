"""``make release``: the source notebook's points to the course file and the points tables, then
nbgrader's release; an edit nbgrader would refuse halfway is refused first, nothing written."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from autograder.core import course as course_file
from autograder.core.chapter import Chapter
from autograder.core.course import Course, CourseError
from autograder.frontends.commands import Refused, load_chapter
from autograder.frontends.reports.safe_write import write_files
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
    """``text`` with its stage rows' points set from ``course``: rows outside it dropped, missing ones added."""
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


# Sentences that quote the course's total or bonus ("out of 100", "(+x/10 bonus)") follow the course.
_TOTAL = re.compile(r"\b(out of|outside the|beside the) \d+(?:\.\d+)?\b")
_BONUS = re.compile(r"\+x/\d+(?:\.\d+)? bonus")


def course_numbers(text: str, course: Course) -> str:
    total = format_points(sum(p.points for p in course.stages.values() if not p.bonus))
    bonus = sum(p.points for p in course.stages.values() if p.bonus)
    text = _TOTAL.sub(lambda match: f"{match.group(1)} {total}", text)
    return _BONUS.sub(f"+x/{format_points(bonus)} bonus", text) if bonus else text


def release(chapter: Chapter, root: Path) -> tuple[Course, list[str]]:
    """The course file, and the points and totals of the notebook, README and docs; the course, and what changed."""
    source = chapter.source_notebook(root)
    label = source.relative_to(root).as_posix()
    course = course_file.from_notebook(source, chapter.declared_stages, label)
    changed = []
    if course_file.write(course, chapter.course_path):
        changed.append(chapter.course_path.name)
    notebook = json.loads(source.read_text(encoding="utf-8"))
    ids = {s.number: s.id for s in chapter.declared_stages}
    edited, table_seen = False, False
    for cell in notebook["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        new = course_numbers(text, course)
        if not table_seen and cell.get("cell_type") == "markdown" and any(_row(line, ids) for line in text.split("\n")):
            # the first table of stages is the points table; later tables are the chapter's own
            new, table_seen = points_table(new, chapter, course), True
        if new != text:
            cell["source"] = new.splitlines(keepends=True)
            edited = True
    if edited:
        source.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        changed.append(label)  # its path: the release's notebook has the same name
    # the course repository's README and docs (students.md goes to the students) show the same table
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        new = points_table(course_numbers(text, course), chapter, course)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page.relative_to(root).as_posix())
    return course, changed


def gradebook_refusal(chapter: Chapter, root: Path, db_url: str) -> str | None:
    """Why nbgrader would refuse the release halfway (cells added or removed once graded), or None."""
    import nbformat
    from nbgrader import utils
    from nbgrader.api import Gradebook, MissingEntry

    database = db_url.removeprefix("sqlite:///")
    if db_url.startswith("sqlite:///") and not (root / database).is_file():
        return None  # no gradebook yet: nothing graded
    cells = nbformat.read(chapter.source_notebook(root), as_version=4).cells
    kinds = {"grade": utils.is_grade, "solution": utils.is_solution, "task": utils.is_task,
             "source": lambda c: utils.is_grade(c) or utils.is_solution(c) or utils.is_locked(c) or utils.is_task(c)}
    new = {kind: {c.metadata.nbgrader["grade_id"] for c in cells if test(c)} for kind, test in kinds.items()}
    with Gradebook(db_url) as gradebook:
        try:
            notebook = gradebook.find_notebook(chapter.id, chapter.id)
        except MissingEntry:
            return None
        submissions = len(notebook.submissions)
        old = {kind: {c.name for c in getattr(notebook, f"{kind}_cells")} for kind in kinds}
    removed = sorted(set().union(*(old[k] - new[k] for k in old)))
    added = sorted(set().union(*(new[k] - old[k] for k in old)))
    if not submissions or not (removed or added):
        return None
    edit = "; ".join(filter(None, [f"removes {', '.join(removed)}" if removed else "",
                                   f"adds {', '.join(added)}" if added else ""]))
    return (f"make release: nothing changed. The gradebook ({database}) holds {submissions} submission(s) of {chapter.id}, "
            f"and nbgrader cannot add or remove cells once it does; this edit of the source notebook {edit}. "
            "Changing points is fine after grading (keep the cells, change their points). To add or remove cells: "
            "keep this term's grades (make export), move the gradebook aside "
            f"(mv {database} {database.removesuffix('.db')}-before-edit.db), then make release and make autograde, "
            "which grades every submission again into a new gradebook (manual grades stay in the moved file).")


def generate_release(chapter: Chapter, root: Path) -> list[str]:
    """nbgrader's release in a folder under build/, its files then copied into assignments/<id>/."""
    (root / "build").mkdir(exist_ok=True)
    destination = chapter.release_notebook(root).parent
    with tempfile.TemporaryDirectory(dir=root / "build", prefix="release-") as staging:
        proc = subprocess.run(["nbgrader", "generate_assignment", chapter.id, "--force", "--log-level=WARN",
                               f"--CourseDirectory.release_directory={staging}"], cwd=root)
        made = Path(staging) / chapter.id
        if proc.returncode != 0 or not made.is_dir():
            raise CourseError(f"nbgrader generate_assignment failed (above); {destination.relative_to(root)} is as it was")
        files = {p.relative_to(made).as_posix(): p.read_bytes() for p in made.rglob("*") if p.is_file()}
    changed = {name: data for name, data in files.items()
               if not (destination / name).is_file() or (destination / name).read_bytes() != data}
    write_files(destination, changed)
    return [(destination / name).relative_to(root).as_posix() for name in sorted(changed)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chapter", default=None, help="the chapter id (default: the registry's default)")
    parser.add_argument("--course-only", action="store_true",
                        help="the course file and the points tables alone, without nbgrader's release")


def run(args: argparse.Namespace) -> int:
    chapter = load_chapter(args.chapter)
    root = Path.cwd().resolve()
    if not args.course_only:
        from nbgrader.apps.baseapp import NbGrader

        app = NbGrader()  # reads nbgrader_config.py from the current directory
        app.initialize([])
        if refusal := gradebook_refusal(chapter, root, app.coursedir.db_url):
            raise Refused(refusal)
    if chapter.course_path is None:
        print(f"{chapter.id} has no course file: every declared stage is graded out of its checks' weights")
        return 0
    try:
        course, changed = release(chapter, root)
        if not args.course_only:
            changed += generate_release(chapter, root)
    except CourseError as exc:
        raise Refused(f"make release: {exc}") from None
    graded = sum(p.points for p in course.stages.values() if not p.bonus)
    bonus = sum(p.points for p in course.stages.values() if p.bonus)
    stages = ", ".join(f"{n}: {points_text(course, n)}" for n in sorted(course.stages))
    print(f"{chapter.id}: stages {stages}; total {format_points(graded)}"
          + (f" (+{format_points(bonus)} bonus)" if bonus else " (no bonus)")
          + ("; updated " + ", ".join(changed) if changed else ""))
    return 0
