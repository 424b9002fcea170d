"""One sandboxed run of a notebook for nbgrader, as JSON on standard output. The hidden seeds and the
time limits come on standard input, never on a command line, which every process can read."""

from __future__ import annotations

import argparse
import json
import os
import sys

from autograder.sandbox.settings import Settings


def grade_and_end_strays(path: str, chapter, numbers: list[int], seeds: dict[int, int], device: str, settings) -> dict:
    """Visible and hidden runs in one loaded worker, as JSON data: {error, confinement, cells, stages,
    diagnosis}. Then every process the submission started is ended; earlier children are left alone."""
    from autograder.chapters import load
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
    from autograder.chapters import load
    from autograder.sandbox.strays import become_subreaper

    given = json.loads(sys.stdin.read() or "{}")  # {"seeds": {stage: seed}, "limits": Settings' seconds}
    seeds = {int(n): int(s) for n, s in given.get("seeds", {}).items()}
    become_subreaper()
    graded = grade_and_end_strays(args.notebook, load(args.chapter), args.stage, seeds, args.device,
                                  Settings.read(**given.get("limits", {})))
    # written only once every process the submission started has ended
    sys.stdout.write(json.dumps(graded))
    sys.stdout.flush()
    return 0
