"""The end of ``make autograde``: a row per student read back from the gradebook, problems first,
the class's most common mistakes, and the progress line while the notebooks run."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field


@dataclass
class Summary:
    students: list[str]
    seconds: float
    failed: dict[str, str]
    replayed: int
    log: str
    notes: dict[str, str] = field(default_factory=dict)  # student -> what the grader should know (renamed notebook)
    rows: list[dict] = field(default_factory=list)  # the summary table, read back from the gradebook
    mistakes: list[str] = field(default_factory=list)  # the class's three most common mistakes (class report)
    report: str = ""  # the class report's path (make class-report), or why it was not written


def running_description(total: int, jobs: int, running: dict[str, float]) -> str:
    """The students whose notebook is running now, longest first, with how long."""
    if not running:
        return f"running {total} notebooks, {jobs} at a time"
    now = time.time()
    longest = sorted(running.items(), key=lambda item: item[1])
    named = ", ".join(f"{student} {int(now - since) // 60}:{int(now - since) % 60:02d}" for student, since in longest[:4])
    return f"running {named}" + (f" (+{len(longest) - 4})" if len(longest) > 4 else "")


# nbgrader's and LatePenalty's lines about lateness: the table's "late (penalty)" column says it.
LATE_NOTICE = re.compile(r"seconds late$|Late submission penalty|hours late, \d+ day")


def summary_rows(db_url: str, assignment: str, students: list[str], failed: dict[str, str], notes: dict[str, str],
                 log: str) -> list[dict]:
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    with Gradebook(db_url) as gb:
        for student in students:
            problems = []
            if student in failed:
                problems.append("NOT GRADED: " + last_line(failed[student]))
            if notes.get(student) and student not in failed:
                problems.append(notes[student])
            problems += sorted({line.split("[WARNING] ", 1)[1] for line in log.splitlines()
                                if line.startswith(f"{student}: ") and "[WARNING] " in line and not LATE_NOTICE.search(line)
                                and not re.search(r"Removing existing (assignment|notebook)", line)})
            row = {"student": student, "score": "", "extra": "", "late": "", "problems": problems}
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                submission = None
            if submission is not None and student not in failed:
                extra = sum(g.extra_credit or 0.0 for nb in submission.notebooks for g in nb.grades)
                penalty = submission.late_submission_penalty or 0.0
                # out of the maximum (100): the bonus is its own column
                row.update(score=f"{max(0.0, submission.score - extra - penalty):g}/{submission.max_score:g}",
                           extra=f"+{extra:g}" if extra else "")
                if submission.total_seconds_late:
                    row["late"] = f"{submission.total_seconds_late / 3600:.1f} h, -{penalty:g}"
            rows.append(row)
    return sorted(rows, key=lambda r: (not any(p.startswith("NOT GRADED") for p in r["problems"]),
                                       not (r["problems"] or r["late"]), r["student"]))


def last_line(error: str) -> str:
    """A failure's reason: the error the first traceback ends with (nbgrader's own generic one
    comes later), else the last non-empty line."""
    lines = error.strip().splitlines()
    for start, line in enumerate(lines):
        if "Traceback (most recent call last)" in line:
            block = []
            for after in lines[start + 1:]:
                if after.startswith("[") or after.startswith("Traceback"):
                    break
                if after.strip():
                    block.append(after.strip())
            if block:
                return block[-1]
    lines = [line.strip() for line in lines if line.strip()]
    return lines[-1] if lines else "unknown error"


def print_summary(summary: Summary, jobs: int, console, verbose: bool = False) -> None:
    from rich.table import Table

    # --force removes the previous autograded copy of every submission: expected, not news.
    notes = [line for line in summary.log.splitlines()
             if line.strip() and not re.search(r"Removing existing (assignment|notebook)", line)]
    for line in notes if verbose else []:  # each student's warnings are in the table's problems column
        console.print(line, markup=False, style="yellow")
    for student, error in summary.failed.items():
        one_line = len(error.strip().splitlines()) <= 1
        shown = error.strip() if verbose or one_line else last_line(error) + "  (V=1: the whole error)"
        console.print(f"{student}: not autograded: {shown}", markup=False, style="red")
    table = Table(title="make autograde: one row per student, problems first", title_justify="left")
    for column in ("student", "score", "extra credit", "late (penalty)", "problems"):
        table.add_column(column, overflow="fold")
    for row in summary.rows:
        table.add_row(row["student"], row["score"] or "-", row["extra"], row["late"],
                      "; ".join(row["problems"]) or ("late" if row["late"] else "ok"),
                      style="red" if any(p.startswith("NOT GRADED") for p in row["problems"]) else None)
    if summary.rows:
        console.print(table)
    graded = len(summary.students) - len(summary.failed)
    how = f"JOBS={jobs}" + (f", {graded - summary.replayed} executed serially"
                            if jobs > 1 and summary.replayed < graded else "")
    if summary.report:
        console.print("Most common mistakes:" + ("" if summary.mistakes else " none named"), markup=False)
        for line in summary.mistakes:
            console.print(f"  {line}", markup=False)
        console.print(f"Class report: {summary.report}", markup=False)
    console.print(f"Autograded {graded}/{len(summary.students)} submissions in {summary.seconds:.0f} s ({how}). "
                  "Scores: make export; feedback: make feedback.")
