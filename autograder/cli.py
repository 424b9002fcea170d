"""python -m autograder SUBMISSION [--results FILE] [--stage N ...] [--device auto|cpu|cuda]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m autograder",
        description="Grade a submission of the chapter 'Coding Attention Mechanisms'. "
                    "Exit status: 0 full marks, 1 some check failed, 2 could not grade.")
    parser.add_argument("submission", help="the notebook (.ipynb) or a Python file (.py)")
    parser.add_argument("--results", metavar="FILE", help="write Gradescope's results.json here")
    parser.add_argument("--stage", nargs="+", metavar="N", help="grade only these stages (number or id)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="where the student's code runs (auto: CUDA when present)")
    parser.add_argument("--stage-timeout", type=float, default=60.0, metavar="S",
                        help="seconds for all checks of one stage (default 60)")
    parser.add_argument("--cell-timeout", type=float, default=60.0, metavar="S",
                        help="seconds for one notebook cell while loading (default 60)")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every failed check")
    return parser.parse_args(argv)


def resolve_device(choice: str) -> str:
    import torch

    if choice == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device is available here (use --device cpu or auto)")
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return choice


def main(argv=None) -> int:
    args = parse_args(argv)
    from autograder import report as reports
    from autograder.engine import grade_notebook_file
    from autograder.sandbox import Limits, become_subreaper, end_stray_processes
    from autograder.stages import stage as lookup

    try:
        for key in args.stage or []:
            lookup(key)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.results:
        reports.write_json(args.results, reports.provisional_json(args.submission, args.stage))
    device = resolve_device(args.device)
    become_subreaper()
    path = Path(args.submission)
    original = path.read_bytes() if path.is_file() else None
    limits = Limits(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout)
    try:
        report = grade_notebook_file(str(path), args.stage, device, limits)
    finally:
        end_stray_processes()
        if original is not None and (not path.is_file() or path.read_bytes() != original):
            path.write_bytes(original)  # the submission is never modified, even by itself
    if args.results:
        reports.write_json(args.results, reports.gradescope_json(report))
    reports.print_console(report, verbose=args.verbose)
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
