"""python -m autograder SUBMISSION [--results FILE] [--stage N ...] [--device auto|cpu|cuda]"""

from __future__ import annotations

import argparse
import shutil
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


class NoDevice(Exception):
    pass


def _torch_may_use_a_gpu() -> bool:
    """False for a CPU-only build of torch, read from torch/version.py without importing
    torch (1.5 s): `--device auto` then means the CPU and the worker can start at once."""
    import importlib.util
    import re

    try:
        spec = importlib.util.find_spec("torch")
        text = (Path(spec.origin).parent / "version.py").read_text()
    except (ImportError, AttributeError, OSError, TypeError):
        return True
    builds = re.findall(r"^(cuda|hip)\b[^=\n]*=\s*(.+?)\s*$", text, re.MULTILINE)
    return len(builds) != 2 or any(value != "None" for _, value in builds)


def resolve_device(choice: str) -> str:
    if choice == "cpu" or (choice == "auto" and not _torch_may_use_a_gpu()):
        return "cpu"
    import torch

    if choice == "cuda" and not torch.cuda.is_available():
        raise NoDevice("--device cuda: no CUDA device is available here (use --device cpu or auto)")
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return choice


def _write_results(path: str, data: dict) -> bool:
    """Write results.json; if something took its place (a folder), clear it and write again."""
    from autograder.report import write_json

    for attempt in range(2):
        try:
            write_json(path, data)
            return True
        except OSError as exc:
            if attempt == 0 and Path(path).is_dir() and not Path(path).is_symlink():
                shutil.rmtree(path, ignore_errors=True)
                continue
            print(f"error: could not write the results to {path}: {exc}", file=sys.stderr)
    return False


def _prestart(args, limits):
    """Start the worker before this process imports torch and the checks: the two start-ups
    (about 1.5 s each) then overlap on two cores. Only for the CPU (a GPU build must import
    torch first to resolve the device) and a readable submission; otherwise grading starts
    the worker itself, as it always could."""
    from autograder.loader import SubmissionError, read_cells
    from autograder.sandbox import Worker

    if args.device == "cuda" or (args.device == "auto" and _torch_may_use_a_gpu()):
        return None
    try:
        worker = Worker(read_cells(args.submission), "cpu", limits)
    except (SubmissionError, OSError):
        return None
    worker.prestart()
    return worker


def main(argv=None) -> int:
    args = parse_args(argv)
    from autograder.sandbox import Limits

    limits = Limits(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout)
    worker = _prestart(args, limits)
    try:
        return _grade(args, limits, worker)
    finally:
        if worker is not None:
            worker.close()  # grading closes it too; this covers the early returns


def grade_report(args, limits, worker, stages, *, show_traceback: bool):
    """One grading, shared by this CLI and ``autograder.ci``: the submitted file left as it
    was, and no device or a grader failure turned into a report that says so (0 points).
    Returns the report and notes for the student (e.g. the submission changed its file)."""
    from autograder.engine import grade_notebook_file, not_graded_report
    from autograder.sandbox import submission_kept

    notes: list[str] = []
    try:
        device = resolve_device(args.device)
        with submission_kept(args.submission) as notes:
            report = grade_notebook_file(args.submission, stages, device, limits,
                                         worker=worker if device == "cpu" else None)
    except Exception as exc:  # noqa: BLE001 - no device, or a bug in the grader: still a valid result
        why = str(exc) if isinstance(exc, NoDevice) else (
            f"the grader itself failed ({type(exc).__name__}: {exc}); please tell the course staff")
        if show_traceback and not isinstance(exc, NoDevice):
            import traceback
            traceback.print_exc()
        report = not_graded_report(args.submission, why, stages)
    return report, notes


def _grade(args, limits, worker) -> int:
    from autograder import report as reports
    from autograder.stages import stage as lookup

    try:
        for key in args.stage or []:
            lookup(key)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    # A valid zero stands from the start, whatever happens to this process later.
    if args.results and not _write_results(args.results, reports.provisional_json(args.submission, args.stage)):
        return 2
    try:
        report, notes = grade_report(args, limits, worker, args.stage, show_traceback=args.verbose)
    except KeyboardInterrupt:
        print("\ninterrupted: nothing was graded" + (f"; {args.results} still says 0 points"
                                                     if args.results else ""), file=sys.stderr)
        return 130
    # Results are written last: every process the submission started has ended by now.
    if args.results and not _write_results(args.results, reports.gradescope_json(report)):
        return 2
    reports.print_console(report, verbose=args.verbose)
    for note in notes:
        print(f"note: {note}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
