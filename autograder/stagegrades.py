"""The engine's grade of each stage, hidden examples included: what nbgrader records.

``python -m autograder.stagegrades NOTEBOOK --out FILE --stage N ... [--hidden-seed N=SEED ...]``
is started by :class:`autograder.nbgrader_hooks.SandboxGrades` for each notebook nbgrader
autogrades. It grades like ``python -m autograder`` (the same engine, limits and defaults),
then runs the stages again on the hidden examples of the instructor's test cells and keeps a
check's points only where it passed both (:func:`autograder.notebook.with_hidden`).
"""

from __future__ import annotations

import argparse
import sys


def grade_stages(path: str, numbers: list[int], seeds: dict[int, int], device: str, limits) -> dict:
    """Visible run, then one hidden run per distinct seed over the stages that earned points
    (a hidden run can only take points away); results as {number: score, max_score, text}."""
    from autograder import report as reports, strategies
    from autograder.engine import grade_notebook_file
    from autograder.notebook import with_hidden

    visible = grade_notebook_file(path, numbers, device, limits)
    results = {r.stage.number: r for r in visible.stages}
    for seed in sorted(set(seeds.values())):
        rerun = [n for n, s in seeds.items() if s == seed and n in results and results[n].score > 0]
        if not rerun:
            continue
        strategies.use_seed(seed)
        try:
            hidden = grade_notebook_file(path, rerun, device, limits)
        finally:
            strategies.use_seed(None)
        for result in hidden.stages:
            results[result.stage.number] = with_hidden(results[result.stage.number], result)

    def note(number: int) -> str:
        return "(graded by the course autograder in a separate process" + (
            ", on the visible and on hidden examples)" if number in seeds else ")")

    return {"error": visible.error,
            "stages": {str(n): {"score": r.score, "max_score": r.max_score,
                                "text": f"{reports.stage_text(r)}\n{note(n)}"} for n, r in results.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.stagegrades",
                                     description="Grade stages of a notebook for nbgrader (SandboxGrades).")
    parser.add_argument("notebook")
    parser.add_argument("--out", required=True)
    parser.add_argument("--stage", type=int, nargs="+", required=True)
    parser.add_argument("--hidden-seed", action="append", default=[], metavar="N=SEED")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cell-timeout", type=float, default=60.0)
    parser.add_argument("--stage-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    from autograder.report import write_json
    from autograder.sandbox import Limits, become_subreaper, end_stray_processes

    seeds = {int(n): int(s) for n, s in (item.split("=", 1) for item in args.hidden_seed)}
    become_subreaper()
    try:
        graded = grade_stages(args.notebook, args.stage, seeds, args.device,
                              Limits(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout))
    finally:
        end_stray_processes()
    write_json(args.out, graded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
