"""``python -m autograder COMMAND [options]`` (``python -m autograder NOTEBOOK`` grades it): each command is
a module with ``add_arguments(parser)`` and ``run(args) -> int``, imported only when it runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

_F = "autograder.frontends"
# name: (module, what it does, in one line)
COMMANDS: dict[str, tuple[str, str]] = {
    "grade": (f"{_F}.students.cli", "grade a notebook: a table of the stages, points and a hint per stage (make test)"),
    "ci": (f"{_F}.hosted.ci", "grade for CI: the table, a Grade annotation, results.json, JUnit and a step summary (make ci-grade)"),
    "classroom50": (f"{_F}.hosted.classroom50", "build Classroom 50's autograder folder for one assignment (make classroom50)"),
    "gradescope": (f"{_F}.hosted.gradescope", "build the Gradescope autograder zip, or run it inside Gradescope (make gradescope)"),
    "release": (f"{_F}.instructors.course", "the source notebook's points to the course file, then the release by nbgrader (make release)"),
    "autograde": (f"{_F}.instructors.autograde", "nbgrader autograde of every submission, sandboxed, n at a time (make autograde)"),
    "stage-grades": (f"{_F}.instructors.nbgrader.stages", "nbgrader's glue: one notebook's stage grades as JSON (run by make autograde)"),
    "duedate": (f"{_F}.instructors.deadline", "store the assignment's due date in the gradebook (make duedate)"),
    "student-repo": (f"{_F}.instructors.student_repo", "the students' repository: one commit, no answers (make student-repo)"),
    "grade-repos": (f"{_F}.instructors.grade_repos", "regrade a class folder of student repositories at a deadline (make grade-repos)"),
    "class-report": (f"{_F}.instructors.class_report", "the class's diagnosed mistakes, ranked (make class-report)"),
}


class Refused(Exception):
    """What a command was given cannot be used; nothing was written. ``error: <why>``, exit status 2."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        width = max(map(len, COMMANDS))
        print("usage: python -m autograder COMMAND [options]   (python -m autograder NOTEBOOK grades it)\n\ncommands:",
              *(f"  {name:<{width}}  {line}" for name, (_, line) in COMMANDS.items()),
              "\npython -m autograder COMMAND --help: the command's options", sep="\n")
        return 0 if argv else 2
    name, rest = (argv[0], argv[1:]) if argv[0] in COMMANDS else ("grade", argv)  # python -m autograder NOTEBOOK: grade it
    try:
        return importlib.import_module(COMMANDS[name][0]).run(parse(name, rest))
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def parse(name: str, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"python -m autograder {name}", description=COMMANDS[name][1])
    importlib.import_module(COMMANDS[name][0]).add_arguments(parser)
    return parser.parse_args(argv)


def load_chapter(chapter_id: str | None, stages=None):
    """The chapter, its ``stages`` checked; Refused names what is not there."""
    from autograder.chapters import load

    try:
        chapter = load(chapter_id)
        chapter.select(stages)
    except KeyError as exc:
        raise Refused(exc.args[0]) from None
    return chapter


def default_jobs() -> int:
    """Gradings at a time by default: the CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
