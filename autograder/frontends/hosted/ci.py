"""CI: grade a notebook once, then give every CI system the same grade (the console table, a Grade
annotation, results.json, JUnit XML, a step summary). Exit 0 graded, 1 below --pass-mark, 2 not graded."""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import re
import secrets
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from autograder import CHECKOUT
from autograder.core.checks import CheckStatus
from autograder.core.results import GradeReport
from autograder.frontends import commands, finder, fingerprint
from autograder.frontends.reports.results_json import gradescope_json, provisional_json
from autograder.frontends.reports.safe_write import write_output, write_results
from autograder.frontends.reports.text import bonus_total, confinement_text, format_points
from autograder.frontends.students import cli

# Stage status -> the mark the step summary shows.
SUMMARY_MARK = {CheckStatus.PASSED: "✅", CheckStatus.FAILED: "❌", CheckStatus.STOPPED: "⏱️",
                CheckStatus.NOT_IMPLEMENTED: "⬜"}
# Check status -> the JUnit element and type of a check that did not pass.
JUNIT_OUTCOME = {CheckStatus.FAILED: ("failure", "CheckFailure"),
                 CheckStatus.NOT_IMPLEMENTED: ("failure", "NotImplementedYet"),
                 CheckStatus.STOPPED: ("error", "StageAborted")}


def exit_status(score: float, error: str, pass_mark: float | None) -> int:
    return 2 if error else 1 if pass_mark is not None and score < pass_mark else 0


def workflow_command(command: str, message: str, title: str) -> str:
    """One GitHub Actions workflow command, escaped as @actions/core escapes it."""
    def data(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    return f"::{command} title={data(title).replace(':', '%3A').replace(',', '%2C')}::{data(message)}"


# Text quoted from a submission must form no link, image or table cell; emphasis and code
# spans only restyle it.
_MARKDOWN_SPECIAL = re.compile(r"([\\\[\]|])")
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=w)(?=ww\.)")


def _cell(text: str) -> str:
    """Text that stays plain inside one Markdown table cell."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))
    text = _AUTOLINK.sub("\u200b", text)  # a zero-width space: "http:\u200b//" is no URL to GitHub
    return text.replace("\r", "").replace("\n", "<br>")


def summary_markdown(report: GradeReport, verdict: fingerprint.Verdict | None = None) -> str:
    lines = [f"## {report.chapter.id}: {format_points(report.score)}/{format_points(report.max_score)} points", ""]
    if verdict is not None:
        release = f" (release `{verdict.release[:16]}`)" if verdict.release else ""
        line = f"Grader fingerprint `{verdict.fingerprint[:16]}`{release}: {_cell(verdict.words)}"
        lines += [f"> [!WARNING]\n> **Grader modified.** {line}" if verdict.status == "modified" else line, ""]
    lines += [f"Confinement of your code while it ran: {_cell(confinement_text(report))}", ""]
    if report.error:
        lines += [f"**Could not grade:** {_cell(report.error)}", ""]
    lines += ["| Stage | Points | Result | Hint |", "| --- | ---: | --- | --- |"]
    for result in report.stages:
        lines.append(f"| {result.stage.number} {result.stage.id} "
                     f"| {format_points(result.score)}/{format_points(result.max_score)} "
                     f"| {SUMMARY_MARK[result.status]} {_cell(result.summary)} | {_cell(result.hint)} |")
    lines.append(f"| **Total** | **{format_points(report.score)}/{format_points(report.max_score)}** | | |")
    if failed := [c for c in report.checks if c.status in (CheckStatus.FAILED, CheckStatus.STOPPED)]:
        lines += ["", f"<details><summary>Every failed check ({len(failed)})</summary>", ""]
        for c in failed:
            hint = f" — hint: {_cell(c.hint)}" if c.hint else ""
            lines.append(f"- **{c.check.id}** {_cell(c.check.title)}: {_cell(c.message)}{hint}")
        lines += ["", "</details>"]
    if report.score < report.max_score:
        lines += ["", "Run `make test` (or `make test STAGE=N`) on your machine for the same table; "
                      "each stage's test cell in the notebook lists every check of that stage."]
    return "\n".join(lines) + "\n"


def notebook_to_grade(args: argparse.Namespace, chapter) -> tuple[Path | None, str]:
    """``args.submission``, else the repository's notebook under another name, with a note."""
    given = Path(args.submission)
    if given.exists():
        return given, ""
    found, note = finder.find_in_repository(Path.cwd(), chapter)
    if found is None:
        return None, ""
    args.submission = str(found)
    return found, f"{given} is not there; graded {found.relative_to(Path.cwd()).as_posix()}, the repository's notebook"


def add_fingerprint(results: dict, verdict: fingerprint.Verdict) -> dict:
    results.setdefault("extra_data", {})["fingerprint"] = {
        "fingerprint": verdict.fingerprint, "release_fingerprint": verdict.release, "status": verdict.status,
        "grader_modified": verdict.status == "modified", "changed": verdict.changed}
    if verdict.status == "modified":
        results["output"] = f"GRADER MODIFIED: {verdict.words}\n{results.get('output', '')}"
    return results


@contextlib.contextmanager
def workflow_commands_stopped():
    """Everything printed inside is plain text to GitHub (a fresh token the submission never
    sees): no line a submission prints can start a workflow command."""
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        print(f"::{token}::", flush=True)


def junit_xml(report: GradeReport, verdict: fingerprint.Verdict) -> str:
    """One <testcase> per check: a stub is a failure, a stopped check an error."""
    suites = ET.Element("testsuites", name=report.chapter.id)
    for result in report.stages:
        tags = [JUNIT_OUTCOME[c.status][0] for c in result.checks if c.status in JUNIT_OUTCOME]
        suite = ET.SubElement(suites, "testsuite", name=result.stage.label, tests=str(len(result.checks)),
                              failures=str(tags.count("failure")), errors=str(tags.count("error")), skipped="0",
                              time=f"{result.seconds:.3f}")
        properties = ET.SubElement(suite, "properties")
        for name, value in (("points", format_points(result.score)), ("max_points", format_points(result.max_score)),
                            ("confinement", confinement_text(report)), ("grader_fingerprint", verdict.fingerprint),
                            ("release_fingerprint", verdict.release or ""), ("grader_status", verdict.status)):
            ET.SubElement(properties, "property", name=name, value=value)
        for c in result.checks:
            case = ET.SubElement(suite, "testcase", name=f"{c.check.id} {c.check.title}",
                                 classname=f"{report.chapter.id}.stage{result.stage.number}_{result.stage.id}")
            if c.status is CheckStatus.PASSED:
                continue
            text = c.message + (f"\nhint: {c.hint}" if c.hint else "")
            tag, kind = JUNIT_OUTCOME[c.status]
            ET.SubElement(case, tag, message=c.message or kind, type=kind).text = text  # a message is one line
    for key in ("tests", "failures", "errors"):
        suites.set(key, str(sum(int(suite.get(key)) for suite in suites)))
    suites.set("time", f"{report.seconds:.3f}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True).decode()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Grade a submission once for CI: console table, a grade annotation, "
                          "Gradescope results.json, JUnit XML and a Markdown step summary. Exit status: "
                          "0 graded (any score), 1 below --pass-mark, 2 could not grade.")
    cli.add_grading_arguments(parser)
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    parser.add_argument("--summary", metavar="FILE", default=os.environ.get("GITHUB_STEP_SUMMARY") or None,
                        help="append the Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)")
    parser.add_argument("--pass-mark", type=float, metavar="P",
                        help="exit 1 when the score is below P points (default: never)")


def run(args: argparse.Namespace) -> int:
    cli.fork_workers_here(args.device, cli.settings_from(args))
    from autograder.frontends.reports.console import print_console  # imports torch

    chapter = commands.load_chapter(args.chapter, args.stage)
    graded, note = notebook_to_grade(args, chapter)
    # the running grader against the release fingerprint make student-repo left (a missing notebook is no edit)
    verdict = fingerprint.verify_checkout(CHECKOUT, chapter.release_notebook(Path()).as_posix(), graded,
                                          notebook_found=graded is not None)
    # From here to the annotations, every line may quote the submission: plain text to GitHub.
    with workflow_commands_stopped():
        if note:
            print(f"note: {note}")
        # a valid zero stands if anything kills this process
        if args.results and not write_results(args.results, add_fingerprint(
                provisional_json(chapter, args.submission, args.stage), verdict)):
            return 2
        report, notes = cli.grade_report(args, chapter, cli.settings_from(args), args.stage, show_traceback=True)
        if args.results and not write_results(args.results, add_fingerprint(gradescope_json(report), verdict)):
            return 2
        # a report that could not be written: said, and exit 2 after the grade is printed
        output_failed = bool(args.junit) and not write_output(
            args.junit, "--junit", lambda data: b"<testsuites" in data[:4096], junit_xml(report, verdict))
        if args.summary:
            try:
                with open(args.summary, "a", encoding="utf-8") as handle:
                    handle.write(summary_markdown(report, verdict))
            except OSError as exc:
                print(f"warning: could not write the step summary to {args.summary}: {exc}", file=sys.stderr)
        print_console(report)
        cli.print_notes(args.submission, chapter, report, notes)
        print(verdict.words if verdict.status != "modified" else f"WARNING: {verdict.words}")
    modified = verdict.status == "modified"
    release = f"; release {verdict.release}" if verdict.release else ""
    print(workflow_command("warning" if modified else "notice", f"{verdict.words}. Fingerprint {verdict.fingerprint}{release}",
                           title="Grader modified" if modified else "Grader fingerprint"))
    grade = f"{format_points(report.score)}/{format_points(report.max_score)} points{bonus_total(report)}"
    print(workflow_command("notice", grade, title="Grade"))  # printed once, last
    status = 2 if output_failed else exit_status(report.score, report.error, args.pass_mark)
    if status == 1:
        print(f"Score {format_points(report.score)} is below the pass mark {format_points(args.pass_mark)}.")
    return status
