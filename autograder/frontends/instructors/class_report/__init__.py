"""``make class-report``: what to re-teach, from the diagnoses of a whole class.

    python -m autograder class-report [--from nbgrader|repos|gradescope]
        [--gradescope-zip EXPORT.zip] [--anonymous] [--out build/class-report]

Reads the diagnosis records (:mod:`autograder.frontends.reports.diagnoses`) that grading left,
never regrading anything:

- ``nbgrader``: ``grading/diagnoses/<student>/<assignment>.json``, written by ``make autograde``
  (the students are those with a submission under ``grading/submitted/`` or a record);
- ``repos``: ``build/grade-repos/<student>/results.json`` and ``grades.csv``, written by
  ``make grade-repos``;
- ``gradescope``: the zip of Gradescope's "Export Submissions" (one ``submission_<id>/``
  folder per submission, each with the autograder's ``results.json``, and
  ``submission_metadata.yml`` naming the submitters).

Writes ``index.html`` (one self-contained page: the plots embedded as PNG, inline CSS, no link
out), ``report.json`` (:func:`aggregate`'s data) and ``mistakes.csv`` (one row per mistake)
under ``--out``; never in place of a file it did not write. A missing or damaged result counts
its student as not graded, with the reason.
"""

from autograder.frontends.instructors.class_report.aggregate import aggregate, top_mistakes
from autograder.frontends.instructors.class_report.command import load_source, main, write_report
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
           "load_gradescope_zip", "load_nbgrader", "load_repos", "load_source", "main", "record_from_results",
           "top_mistakes", "write_report"]
