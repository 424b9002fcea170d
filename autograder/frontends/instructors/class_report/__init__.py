"""``make class-report``: what to re-teach, from the diagnosis records a class's grading left
(nbgrader's, ``make grade-repos``', or a Gradescope export), never regrading anything. Writes
``index.html`` (self-contained), ``report.json`` and ``mistakes.csv``, never over a file it did
not write; a missing or damaged record is a student not graded, with the reason.
"""

from autograder.frontends.instructors.class_report.aggregate import aggregate, top_mistakes
from autograder.frontends.instructors.class_report.command import main, write_report
from autograder.frontends.instructors.class_report.sources import (
    CSV_HEADER,
    DEFAULT_OUT,
    ReportInputError,
    Submission,
    checked_record,
    detect_source,
    load_gradescope_zip,
    load_nbgrader,
    load_repos,
    record_from_results,
)

__all__ = ["CSV_HEADER", "DEFAULT_OUT", "ReportInputError", "Submission", "aggregate", "checked_record", "detect_source",
           "load_gradescope_zip", "load_nbgrader", "load_repos", "main", "record_from_results", "top_mistakes",
           "write_report"]
