"""One sandboxed run of a notebook for nbgrader: each cell's output and each stage's grade.

``python -I -m autograder stage-grades NOTEBOOK --stage N ... < SEEDS`` (SEEDS: the
hidden examples' seeds as JSON, ``{"N": SEED, ...}``, on standard input: never on a command
line, which every process of the machine can read) is started by
:class:`autograder.frontends.instructors.nbgrader.execute.SandboxExecute` for each notebook
nbgrader autogrades, and writes its answer as JSON on its standard output (never to a file a
worker could reach). The notebook is loaded once, in the confined worker: what each cell printed
(or the error it raised) becomes nbgrader's cell outputs, and the stages are graded like
``python -m autograder`` (the same engine, limits and defaults), then again on the hidden examples
of the instructor's test cells, in the same loaded worker; a check keeps its points only where
it passed both (:func:`autograder.core.engine.with_hidden`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from autograder.sandbox.limits import Limits
from autograder.sandbox.settings import Settings


def grade_stages(path: str, chapter, numbers: list[int], seeds: dict[int, int], device: str, settings) -> dict:
    """Visible run, then one hidden run per distinct seed over the checks it could fail (those
    that passed and read the seed: engine.checks_hidden_examples_could_fail), all in one loaded worker. Returns
    {error, confinement, cells: [{index, status, stdout, stderr, error}], stages: {number: score, max_score, text},
    diagnosis} (diagnosis: :func:`autograder.frontends.reports.diagnoses.submission_record`, what
    SandboxExecute keeps beside the autograded notebook for the class report)."""
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
    """:func:`grade_stages`, then every process the submission started is ended (this process
    must be a subreaper, :func:`~autograder.sandbox.strays.become_subreaper`, for the orphans
    among them to be its children). Only processes started during the grading are touched, so
    a process that grades many notebooks (``make autograde``'s workers) can call it for each;
    the answer is what the JSON on stdout would carry."""
    from autograder.chapters import load
    from autograder.sandbox.strays import children_of, end_stray_processes

    before = children_of(os.getpid())
    try:
        graded = grade_stages(path, chapter or load(None), numbers, seeds, device, settings)
    finally:
        end_stray_processes(before)
    return json.loads(json.dumps(graded))


def read_seeds(text: str) -> dict[int, int]:
    """The hidden examples' seeds from standard input (``{"N": SEED}``; nothing: none)."""
    return {int(n): int(s) for n, s in (json.loads(text) if text.strip() else {}).items()}


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

    seeds = read_seeds(sys.stdin.read())
    become_subreaper()
    graded = grade_and_end_strays(args.notebook, load(args.chapter), args.stage, seeds, args.device,
                                  Settings.read(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout,
                                                total_seconds=args.total_timeout))
    # Only now, every process the submission started having ended, the answer is written.
    sys.stdout.write(json.dumps(graded))
    sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    from autograder.frontends import commands

    return commands.main(["stage-grades", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
