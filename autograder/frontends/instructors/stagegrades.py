"""One sandboxed run of a notebook for nbgrader, as JSON on standard output. The hidden seeds come on
standard input, never on a command line, which every process can read."""

from __future__ import annotations

import argparse
import json
import os
import sys

from autograder.sandbox.settings import Limits, Settings


def grade_stages(path: str, chapter, numbers: list[int], seeds: dict[int, int], device: str, settings) -> dict:
    """Visible and hidden runs in one loaded worker: {error, confinement, cells, stages, diagnosis}."""
    from autograder.core.engine import grade_with_hidden_examples
    from autograder.frontends.reports.diagnoses import submission_record
    from autograder.frontends.reports.text import confinement_text, stage_text

    visible, results = grade_with_hidden_examples(path, chapter, numbers, seeds, device, settings, keep_outputs=True)
    fences = confinement_text(visible)

    def note(number: int) -> str:
        return ("(graded by the course autograder in a separate process" + (
            ", on the visible and on hidden examples" if number in seeds else "") + f"; confinement: {fences})")

    return {"error": visible.error, "confinement": fences,
            "cells": visible.cells,
            "diagnosis": submission_record(visible, results, path, hidden=bool(seeds)),
            "stages": {str(n): {"score": r.score, "max_score": r.max_score,
                                "text": f"{stage_text(r)}\n{note(n)}"} for n, r in results.items()}}


def grade_and_end_strays(path: str, chapter, numbers: list[int], seeds: dict[int, int], device: str, settings) -> dict:
    """Then every process the submission started is ended; earlier children are left alone."""
    from autograder.chapters import load
    from autograder.sandbox.strays import children_of, end_stray_processes

    before = children_of(os.getpid())
    try:
        graded = grade_stages(path, chapter or load(None), numbers, seeds, device, settings)
    finally:
        end_stray_processes(before)
    return json.loads(json.dumps(graded))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebook")
    parser.add_argument("--stage", type=int, nargs="*", default=[])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--chapter", default=None)
    parser.add_argument("--cell-timeout", type=float, default=Limits().cell_seconds)
    parser.add_argument("--stage-timeout", type=float, default=Limits().stage_seconds)
    parser.add_argument("--total-timeout", type=float, default=Limits().total_seconds)


def run(args: argparse.Namespace) -> int:
    from autograder.chapters import load
    from autograder.sandbox.strays import become_subreaper

    text = sys.stdin.read()
    seeds = {int(n): int(s) for n, s in (json.loads(text) if text.strip() else {}).items()}
    become_subreaper()
    graded = grade_and_end_strays(args.notebook, load(args.chapter), args.stage, seeds, args.device,
                                  Settings.read(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout,
                                                total_seconds=args.total_timeout))
    # written only once every process the submission started has ended
    sys.stdout.write(json.dumps(graded))
    sys.stdout.flush()
    return 0
