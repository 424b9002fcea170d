"""``make class-report``: what to re-teach, from the diagnosis records a class's grading left
(nbgrader's, ``make grade-repos``', or a Gradescope export), never regrading anything. Writes
``index.html`` (self-contained), ``report.json`` and ``mistakes.csv``, never over a file it did
not write; a missing or damaged record is a student not graded, with the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from autograder.frontends import commands
from autograder.frontends.instructors.class_report.aggregate import aggregate, top_mistakes
from autograder.frontends.instructors.class_report.render import mistakes_csv, plots, render_html
from autograder.frontends.instructors.class_report.sources import (
    CSV_HEADER,
    DEFAULT_OUT,
    FILES,
    GENERATOR,
    REPORT_FORMAT,
    REPOS_OUT,
    ReportInputError,
    Submission,
    checked_record,
    detect_source,
    load_gradescope_zip,
    load_nbgrader,
    load_repos,
    record_from_results,
)

__all__ = ["DEFAULT_OUT", "ReportInputError", "checked_record", "load_gradescope_zip", "load_nbgrader", "load_repos",
           "record_from_results", "top_mistakes", "write_report"]


def _ours(name: str):
    if name == "index.html":
        return lambda data: GENERATOR.encode() in data[:2000]
    if name == "report.json":
        def is_report(data: bytes) -> bool:
            try:
                return json.loads(data).get("format") == REPORT_FORMAT
            except (ValueError, AttributeError):
                return False
        return is_report
    return lambda data: data.startswith(",".join(CSV_HEADER).encode())


def write_report(submissions: list[Submission], out: Path, *, stages: list[dict] | None = None,
                 anonymous: bool = False, source: str = "") -> dict:
    """The report's three files under ``out`` (OutputRefused over a file it did not write); its data."""
    from autograder.frontends.reports.safe_write import OutputRefused, overwrite_refusal, write_json

    if out.exists() and not out.is_dir():
        raise OutputRefused(f"--out {out}: that is a file; give a folder")
    for name in FILES:
        why = overwrite_refusal(out / name, "--out", _ours(name))
        if why:
            raise OutputRefused(why)
    report = aggregate(submissions, stages, anonymous=anonymous, source=source)
    page = render_html(report, plots(report))
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "report.json", report)
    for name, text in (("index.html", page), ("mistakes.csv", mistakes_csv(report))):
        partial = out / f".{name}.partial"
        partial.write_text(text, encoding="utf-8")
        partial.replace(out / name)
    return report


def load_source(source: str, *, root: Path = Path("."), repos_out: Path = REPOS_OUT, zip_path: Path | None = None,
                assignment: str | None = None) -> list[Submission]:
    if source == "gradescope":
        if zip_path is None:
            raise ReportInputError("--from gradescope needs the export: --gradescope-zip path/to/export.zip")
        return load_gradescope_zip(zip_path)
    if source == "repos":
        if not (repos_out / "grades.csv").is_file() and not any(repos_out.glob("*/results.json")):
            raise ReportInputError(f"{repos_out} holds no grades: run make grade-repos REPOS=... first")
        return load_repos(repos_out)
    return load_nbgrader(root, assignment)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", choices=("nbgrader", "repos", "gradescope"), default=None,
                        help="where the grades are (default: --gradescope-zip if given, else nbgrader's "
                             "grading/diagnoses, else make grade-repos' folder)")
    parser.add_argument("--gradescope-zip", type=Path, default=None, metavar="ZIP",
                        help="Gradescope's Export Submissions zip")
    parser.add_argument("--repos-out", type=Path, default=REPOS_OUT, metavar="DIR",
                        help=f"make grade-repos' output folder (default {REPOS_OUT})")
    parser.add_argument("--anonymous", action="store_true", help="leave every student name out (to show the class)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the report goes (default {DEFAULT_OUT})")
    parser.add_argument("--chapter", default=None, metavar="ID",
                        help="the assignment (chapter) id of nbgrader's records (default: the registry's)")


def run(args: argparse.Namespace) -> int:
    # records only: no chapter is imported (that would import torch)
    from autograder.frontends.reports.safe_write import OutputRefused

    started = time.monotonic()
    try:
        source = args.source or ("gradescope" if args.gradescope_zip else detect_source(Path("."), args.repos_out))
        submissions = load_source(source, repos_out=args.repos_out, zip_path=args.gradescope_zip,
                                  assignment=args.chapter)
        if not submissions:
            raise ReportInputError(f"no submissions found ({source})")
        report = write_report(submissions, args.out, anonymous=args.anonymous, source=source)
    except (ReportInputError, OutputRefused) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    print(f"{report['graded']}/{report['students']} submissions graded ({source}); "
          f"{len(report['mistakes'])} distinct mistakes diagnosed.")
    for line in top_mistakes(report):
        print(f"  {line}")
    for n in report["not_graded"]:
        print(f"  not graded: {n['student'] + ': ' if n['student'] else ''}{n['reason']}")
    print(f"{args.out / 'index.html'} (and report.json, mistakes.csv) in {time.monotonic() - started:.1f} s")
    return 0


main = commands.script("class-report")
