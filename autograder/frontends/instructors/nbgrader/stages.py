"""What the nbgrader plugins share, ``stage-grades`` (the sandboxed run SandboxExecute starts), and
each autograde's outcome in grading/outcomes/: nbgrader keeps the earlier grades when an autograde
fails and says so nowhere, so make export reads the outcome."""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from pathlib import Path

from autograder.chapters import load
from autograder.core.chapter import Chapter, Stage
from autograder.frontends.finder import find_notebook
from autograder.frontends.reports.safe_write import read_json, write_json
from autograder.sandbox.settings import Settings

OUTCOMES = "grading/outcomes"
UNFINISHED = "the last autograde of this submission did not finish (its log says why)"


def chapter_of(assignment: str | None) -> Chapter | None:
    """The chapter of an nbgrader assignment (the assignment id is the chapter id)."""
    try:
        return load(assignment) if assignment else None
    except KeyError:
        return None


def by_grade_id(chapter: Chapter | None) -> dict[str, Stage]:
    return {s.grade_id: s for s in chapter.stages} if chapter else {}


def csv_column(stage: Stage) -> str:
    return f"stage{stage.number}_{stage.id}"


def stage_cells(nb, chapter: Chapter) -> dict[int, Stage]:
    """Index of each stage's test cell -> the stage."""
    stages = by_grade_id(chapter)
    ids = {index: cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for index, cell in enumerate(nb.cells)
           if cell.cell_type == "code"}
    return {index: stages[grade_id] for index, grade_id in ids.items() if grade_id in stages}


def hidden_seeds(source: str, stage: Stage) -> list[int]:
    """The seeds of the hidden calls ``grade_stage(CHAPTER, N, globals(), hidden_seed=S)`` in a test cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    seeds = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "grade_stage"):
            continue
        seed, number = {k.arg: k.value for k in node.keywords}.get("hidden_seed"), node.args[1] if len(node.args) > 1 else None
        if isinstance(seed, ast.Constant) and isinstance(seed.value, int) and isinstance(number, ast.Constant) \
                and number.value in (stage.number, str(stage.number)):
            seeds.append(seed.value)
    return seeds


def cells_key(nb) -> str:
    """What a sandboxed run depends on: every cell's type, source and nbgrader metadata."""
    return json.dumps([(c.cell_type, c.source, c.get("metadata", {}).get("nbgrader")) for c in nb.cells],
                      sort_keys=True, default=str)


def submitted_notebook(folder: Path, assignment: str) -> tuple[Path | None, str]:
    """The submission in a student's folder (two renamed candidates refused), and a note."""
    found = find_notebook(folder, assignment)
    expected = f"{assignment}.ipynb"
    if found.notebook is None:
        return None, found.reason
    if found.notebook.name == expected:
        others = [p.name for p in found.candidates if p != found.notebook]
        return found.notebook, (f"graded {expected}; not graded: {', '.join(others)}" if others else "")
    return found.notebook, f"renamed notebook: graded {found.notebook.name} as {expected}"


def diagnosis_path(folder: Path, student: str, assignment: str) -> Path | None:
    """``folder/<student>/<assignment>.json``; None for an id that is not one folder name."""
    if any(not name or name in (".", "..") or Path(name).name != name or "\\" in name for name in (student, assignment)):
        return None
    return folder / student / f"{assignment}.json"


def read_outcome(student: str, assignment: str, root: Path | str = ".") -> dict | None:
    """The record (``graded``, ``reason``, ``notes``), or None."""
    path = diagnosis_path(Path(root) / OUTCOMES, student, assignment)
    record = read_json(path) if path else None
    return record if isinstance(record, dict) else None


def write_outcome(student: str, assignment: str, graded: bool, reason: str, notes: list[str] | None = None,
                  root: Path | str = ".") -> None:
    """``notes`` None: those the run recorded when it started."""
    path = diagnosis_path(Path(root) / OUTCOMES, student, assignment)
    if path is not None:
        notes = (read_outcome(student, assignment, root) or {}).get("notes", []) if notes is None else notes
        write_json(path, {"graded": graded, "reason": reason, "notes": notes})


def grade_and_end_strays(path: str, chapter, numbers: list[int], seeds: dict[int, int], device: str, settings) -> dict:
    """Visible and hidden runs in one loaded worker, as JSON data: {error, confinement, cells, stages,
    diagnosis}. Then every process the submission started is ended; earlier children are left alone."""
    from autograder.core.engine import grade_with_hidden_examples
    from autograder.frontends.reports.diagnoses import submission_record
    from autograder.frontends.reports.text import confinement_text, stage_text
    from autograder.sandbox.strays import children_of, end_stray_processes

    before = children_of(os.getpid())
    try:
        visible, results = grade_with_hidden_examples(path, chapter or load(None), numbers, seeds, device, settings,
                                                      keep_outputs=True)
        diagnosis = submission_record(visible, results, path, hidden=bool(seeds))
    finally:
        end_stray_processes(before)
    fences = confinement_text(visible)
    hidden = ", on the visible and on hidden examples"
    return json.loads(json.dumps({
        "error": visible.error, "confinement": fences, "cells": visible.cells, "diagnosis": diagnosis,
        "stages": {str(n): {"score": r.score, "max_score": r.max_score,
                            "text": f"{stage_text(r)}\n(graded by the course autograder in a separate process"
                                    f"{hidden if n in seeds else ''}; confinement: {fences})"} for n, r in results.items()}}))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebook")
    parser.add_argument("--stage", type=int, nargs="*", default=[])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--chapter", default=None)


def run(args: argparse.Namespace) -> int:
    from autograder.sandbox.oslayer import become_subreaper

    given = json.loads(sys.stdin.read() or "{}")  # {"seeds": {stage: seed}, "limits": Settings' seconds}
    seeds = {int(n): int(s) for n, s in given.get("seeds", {}).items()}
    become_subreaper()
    graded = grade_and_end_strays(args.notebook, load(args.chapter), args.stage, seeds, args.device,
                                  Settings.read(**given.get("limits", {})))
    # written only once every process the submission started has ended
    print(json.dumps(graded), end="", flush=True)
    return 0
