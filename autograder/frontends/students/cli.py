"""``make test``: grade one submission and print the table; and what every grading front end shares:
the arguments, the device, the workers' fork server and :func:`grade_report`."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

# what is used after grading is imported before student code runs
from autograder import CHECKOUT
from autograder.core.course import stale_points
from autograder.frontends import commands, finder, fingerprint
from autograder.frontends.reports.safe_write import read_json
from autograder.frontends.students.cellorder import late_names
from autograder.sandbox.loader import SubmissionError, read_cells
from autograder.sandbox.settings import HINT_LEVELS, Limits, Settings

# The printed time is the student's whole wait, imports included.
_STARTED = time.monotonic()

DEFAULT_LIMITS = Limits()
# How a report's error begins when the grader, not the submission, failed.
GRADER_FAILED = "the grader itself failed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Grade a submission of a chapter's exercises (default: 'Coding Attention Mechanisms'). "
                          "Exit status: 0 full marks, 1 some check failed, 2 could not grade.")
    add_grading_arguments(parser)
    parser.add_argument("--verbose", "-v", action="store_true", help="list every failed check, each with its hint")
    parser.add_argument("--hints", type=int, choices=HINT_LEVELS, metavar="LEVEL",
                        help="how much a hint says: 1 what is wrong, 2 also the code that fixes it (default: your course's)")
    parser.add_argument("--hidden-examples-seed", type=int, metavar="SEED",
                        help="grade again on examples drawn from this secret seed; only results.json has them")


def add_grading_arguments(parser: argparse.ArgumentParser) -> None:
    from autograder.chapters import DEFAULT

    parser.add_argument("submission", help="the notebook (.ipynb) or a Python file (.py)")
    parser.add_argument("--results", metavar="FILE", help="write Gradescope's results.json here")
    parser.add_argument("--stage", nargs="+", metavar="N", help="grade only these stages (number or id)")
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where the student's code runs (auto: CUDA, else Apple's MPS, else the CPU)")
    parser.add_argument("--chapter", default=DEFAULT, metavar="ID",
                        help=f"the chapter: a registered id or a module defining CHAPTER (default {DEFAULT})")
    parser.add_argument("--stage-timeout", type=float, default=DEFAULT_LIMITS.stage_seconds, metavar="S",
                        help=f"seconds for all checks of one stage (default {DEFAULT_LIMITS.stage_seconds:g})")
    parser.add_argument("--cell-timeout", type=float, default=DEFAULT_LIMITS.cell_seconds, metavar="S",
                        help=f"seconds for one notebook cell while loading (default {DEFAULT_LIMITS.cell_seconds:g})")


def settings_from(args: argparse.Namespace) -> Settings:
    settings = Settings.read(cell_seconds=args.cell_timeout, stage_seconds=args.stage_timeout)
    return replace(settings, hint_level=args.hints) if getattr(args, "hints", None) else settings


class NoDevice(Exception):
    pass


# auto: CUDA, then Apple's MPS, then the CPU (as the book's code picks).
DEVICES = ["auto", "cpu", "cuda", "mps"]


def _mps_available() -> bool:
    import torch

    return torch.backends.mps.is_available()


def resolve_device(choice: str) -> str:
    """The device to grade on; torch is imported for any choice but the CPU (the grading imports it anyway)."""
    if choice == "cpu":
        return "cpu"
    import torch

    if choice == "cuda" and not torch.cuda.is_available():
        raise NoDevice("--device cuda: no CUDA device is available here (use --device cpu or auto)")
    if choice == "mps" and not _mps_available():
        raise NoDevice("--device mps: Apple's MPS (Metal) GPU is not available here; it needs macOS on Apple "
                       "silicon or an AMD GPU and a macOS build of PyTorch (use --device cpu or auto)")
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if _mps_available() else "cpu"
    return choice


def fork_workers_here(device: str, settings) -> None:
    """CPU workers start as forks of this process once it imported PyTorch (one import for both),
    where this process may fork them: call it before any check, chapter or secret is read."""
    from autograder.sandbox.launch import fork_server_here

    with suppress(NoDevice):  # no such device: the grading says so
        if resolve_device(device) == "cpu":
            fork_server_here(settings)


def find_renamed(args) -> None:
    """Where the named notebook is missing, grades the folder's one renamed copy instead (``args.submission``
    changed), or names the candidates."""
    path = Path(args.submission)
    if path.exists() or path.suffix != ".ipynb" or not path.parent.is_dir():
        return
    found = finder.find_notebook(path.parent, path.stem, expected=path.name)
    if found.notebook is not None:
        args.submission = str(found.notebook)
        print(f"note: there is no {path.name} in {path.parent}/; graded the notebook there, {found.notebook.name}")
    elif found.problem == "several":
        print(f"note: there is no {path.name} in {path.parent}/ but {len(found.candidates)} other notebooks; "
              "grade one of them with", *(f"  make test NOTEBOOK={shlex.quote(str(p))}" for p in found.candidates),
              sep="\n")


def stale_points_note(submission: str, chapter) -> str | None:
    """One sentence when the notebook's test cells state other points than the course's."""
    notebook = read_json(submission)  # None: a .py file; else the grade already says why the notebook could not be read
    return stale_points(notebook, chapter) if isinstance(notebook, dict) else None


def edited_test_cells(submission: str, chapter) -> list[str]:
    """The grade_ids of the notebook's test cells that differ from the release record's, else (the
    course repository) from both the released notebook's and the source's, which holds the hidden tests."""
    def cells(path: Path) -> dict[str, str]:  # "notebook cell <grade_id>" -> its hash
        with suppress(OSError):
            return fingerprint.locked_cells(path.read_bytes())
        return {}

    record = read_json(CHECKOUT / fingerprint.RELEASE_FILE)
    parts = record.get("parts") if isinstance(record, dict) else None
    allowed = [{name: str(value) for name, value in parts.items()}] if isinstance(parts, dict) else \
        [cells(chapter.release_notebook(CHECKOUT)), cells(chapter.source_notebook(CHECKOUT))]
    return sorted(name.removeprefix(fingerprint.LOCKED_CELL_PREFIX) for name, sha in cells(Path(submission)).items()
                  if name in allowed[0] and all(sha != known.get(name) for known in allowed))


def main(argv=None) -> int:  # the ch03-grade console script, and python -m autograder.frontends.students.cli
    return commands.main(["grade", *(sys.argv[1:] if argv is None else argv)])


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    find_renamed(args)
    if args.hidden_examples_seed is None:  # a seed on the command line is not for the workers' memory
        fork_workers_here(args.device, settings)
    from autograder.frontends.reports.console import print_console
    from autograder.frontends.reports.results_json import gradescope_json, provisional_json
    from autograder.frontends.reports.safe_write import write_results

    chapter = commands.load_chapter(args.chapter, args.stage)
    # a valid zero stands from the start, whatever happens to this process later
    if args.results and not write_results(args.results, provisional_json(chapter, args.submission, args.stage)):
        return 2
    try:
        report, notes = grade_report(args, chapter, settings, args.stage, show_traceback=args.verbose)
    except KeyboardInterrupt:
        still = f"; {args.results} still says 0 points" if args.results else ""
        print(f"\ninterrupted: nothing was graded{still}", file=sys.stderr)
        return 130
    # Results are written last: every process the submission started has ended by now.
    if args.results and not write_results(args.results, gradescope_json(report)):
        return 2
    report.seconds = max(report.seconds, time.monotonic() - _STARTED)
    print_console(report, verbose=args.verbose)
    print_notes(args.submission, chapter, report, notes)
    return report.exit_code


def grade_report(args, chapter, settings, stages, *, show_traceback: bool):
    """One grading: the submitted file left as it was; no device or a grader failure becomes a
    report that says so (0 points). Returns the report and notes for the student."""
    from autograder.core.engine import grade_notebook_file, grade_with_hidden_examples, not_graded_report
    from autograder.frontends.reports.console import GRADER_PRELOADS
    from autograder.sandbox.restore import submission_kept

    notes: list[str] = []
    seed = getattr(args, "hidden_examples_seed", None)
    try:
        device = resolve_device(args.device)
        with submission_kept(args.submission) as notes:
            if seed is None:
                report = grade_notebook_file(args.submission, chapter, stages, device, settings,
                                             preload=GRADER_PRELOADS)
            else:
                every_stage = {s.number: seed for s in chapter.select(stages)}
                report, report.hidden_examples = grade_with_hidden_examples(
                    args.submission, chapter, stages, every_stage, device, settings,
                    preload=GRADER_PRELOADS)
    except Exception as exc:
        why = str(exc) if isinstance(exc, NoDevice) else (
            f"{GRADER_FAILED} ({type(exc).__name__}: {exc}); please tell the course staff")
        if show_traceback and not isinstance(exc, NoDevice):
            import traceback
            traceback.print_exc()
        report = not_graded_report(chapter, args.submission, why, stages)
    return report, notes


def print_notes(submission: str, chapter, report, notes: list[str]) -> None:
    """What the student should know beside the grade (make test and CI alike)."""
    for note in filter(None, [*notes, stale_points_note(submission, chapter)]):
        print(f"note: {note}")
    try:
        late = late_names(read_cells(submission))  # the test cell fails where a function reads a later global
    except (SubmissionError, OSError):
        late = []  # what cannot be read was reported as the grade's error
    for warning in filter(None, [finder.overlooked(submission, report.score == 0 and not report.bonus_score), *late]):
        print(f"warning: {warning}")
    if edited := edited_test_cells(submission, chapter):
        print(f"warning: the test cell{'s' if len(edited) > 1 else ''} {', '.join(edited)} {'were' if len(edited) > 1 else 'was'} "
              "edited: restore the test cell as you were given it; this grade comes from the course's own checks, not "
              "from the cells, and CI reports the edit to the course staff")


if __name__ == "__main__":
    sys.exit(main())
