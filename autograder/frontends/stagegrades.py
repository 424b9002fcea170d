"""The engine's grade of each stage, hidden examples included: what nbgrader records.

``python -m autograder.frontends.stagegrades NOTEBOOK --out FILE --stage N ... [--hidden-seed N=SEED ...]``
is started by :class:`autograder.frontends.nbgrader_plugins.SandboxGrades` for each notebook nbgrader
autogrades. It grades like ``python -m autograder`` (the same engine, limits and defaults),
then runs the stages again on the hidden examples of the instructor's test cells and keeps a
check's points only where it passed both (:func:`autograder.frontends.notebook.with_hidden`).
"""

from __future__ import annotations

import argparse
import sys

from autograder.sandbox.client import Limits


def grade_stages(path: str, chapter, numbers: list[int], seeds: dict[int, int], device: str, limits) -> dict:
    """Visible run, then one hidden run per distinct seed over the stages that earned points
    (a hidden run can only take points away); results as {number: score, max_score, text}."""
    from autograder.core.engine import grade_notebook_file
    from autograder.frontends import rendering as reports
    from autograder.frontends.notebook import with_hidden

    visible = grade_notebook_file(path, chapter, numbers, device, limits)
    results = {r.stage.number: r for r in visible.stages}
    for seed in sorted(set(seeds.values())):
        rerun = [n for n, s in seeds.items() if s == seed and n in results and results[n].score > 0]
        if not rerun:
            continue
        hidden = grade_notebook_file(path, chapter, rerun, device, limits, examples_seed=seed)
        for result in hidden.stages:
            results[result.stage.number] = with_hidden(results[result.stage.number], result)

    def note(number: int) -> str:
        return "(graded by the course autograder in a separate process" + (
            ", on the visible and on hidden examples)" if number in seeds else ")")

    return {"error": visible.error,
            "stages": {str(n): {"score": r.score, "max_score": r.max_score,
                                "text": f"{reports.stage_text(r)}\n{note(n)}"} for n, r in results.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.frontends.stagegrades",
                                     description="Grade stages of a notebook for nbgrader (SandboxGrades).")
    parser.add_argument("notebook")
    parser.add_argument("--out", required=True)
    parser.add_argument("--stage", type=int, nargs="+", required=True)
    parser.add_argument("--hidden-seed", action="append", default=[], metavar="N=SEED")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--chapter", default=None)
    parser.add_argument("--cell-timeout", type=float, default=Limits().cell_seconds)
    parser.add_argument("--stage-timeout", type=float, default=Limits().stage_seconds)
    args = parser.parse_args(argv)
    from autograder.chapters import load
    from autograder.frontends.rendering import write_json
    from autograder.sandbox.client import become_subreaper, end_stray_processes

    seeds = {int(n): int(s) for n, s in (item.split("=", 1) for item in args.hidden_seed)}
    become_subreaper()
    try:
        graded = grade_stages(args.notebook, load(args.chapter), args.stage, seeds, args.device,
                              Limits(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout))
    finally:
        end_stray_processes()
    write_json(args.out, graded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
