"""nbgrader settings. nbgrader reads this file only from the current directory (elsewhere it
quietly starts an empty gradebook), so every nbgrader command runs from the repository root;
the Makefile does so. grading/ holds submissions, grades and the gradebook, which stores the
hidden tests in full: it is git-ignored and must never reach students."""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.converters import Autograde
from nbgrader.preprocessors import (
    AssignLatePenalties,
    DeduplicateIds,
    Execute,
    GetGrades,
    SaveAutoGrades,
)

from autograder.frontends.instructors.nbgrader.execute import SandboxExecute
from autograder.frontends.instructors.nbgrader.export import StageCsvExport
from autograder.frontends.instructors.nbgrader.plugins import (
    FeedbackClearHiddenTests,
    LatePenalty,
    PenaltyOnScore,
    ReadableFeedback,
    RecordOutcome,
    RepairCells,
    SaveExtraCredit,
)

c = get_config()

c.CourseDirectory.root = os.path.abspath(".")
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.submitted_directory = "grading/submitted"
c.CourseDirectory.autograded_directory = "grading/autograded"
c.CourseDirectory.feedback_directory = "grading/feedback"
c.CourseDirectory.db_url = "sqlite:///grading/gradebook.db"

# The release keeps no outputs, and a stub raises an error a student can act on.
c.ClearOutput.enabled = True
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("not implemented yet: replace this line with your code")'
}

# Autograde. A submission is one notebook: nbgrader copies every other file of the student's
# folder next to it, where a stray torch.py or autograder.py would shadow the real module.
# Python files are not copied (the sandboxed worker never reads the submission's folder anyway).
c.CourseDirectory.ignore = [".ipynb_checkpoints", "__pycache__", ".hypothesis", "feedback", "*.py", "*.pyc", "*.so"]
# The sandbox's time limits (c.SandboxExecute.cell_timeout, stage_timeout, total_timeout) are
# the CLI's by default (Limits in autograder/sandbox/settings.py).
# A deleted or edited test cell comes back from the gradebook (edited ones always did).
c.OverwriteCells.add_missing_cells = True
# No kernel: the notebook runs once, in the sandboxed worker, which fills every cell's outputs
# and grades each stage's test cell (a kernel would run the student's code with the
# instructor's rights, next to the gradebook; its test cells' output could be forged).
_steps = list(Autograde.class_traits()["autograde_preprocessors"].default())  # nbgrader's own list
_steps[_steps.index(Execute)] = SandboxExecute
# Stage 8 (the bonus) is recorded as nbgrader extra credit, before the late penalty is computed.
_steps.insert(_steps.index(SaveAutoGrades) + 1, SaveExtraCredit)
# The late penalty is a share of the score without the bonus (nbgrader's own takes it from both).
_steps[_steps.index(AssignLatePenalties)] = PenaltyOnScore
# Last: the student's grades are all in the gradebook (grading/outcomes/: make export says
# NOT GRADED, with the reason, for a student whose last autograde did not get here).
_steps.append(RecordOutcome)
c.Autograde.autograde_preprocessors = _steps
# Before nbgrader reads any cell's metadata: a copied graded cell (same grade_id), or an id that
# is not the assignment's, would stop nbgrader from grading the student at all. An untouched test
# cell gets back the hidden tests its gradebook checksum covers: no warning for it.
_sanitize = list(Autograde.class_traits()["sanitize_preprocessors"].default())
_sanitize.insert(_sanitize.index(DeduplicateIds), RepairCells)
c.Autograde.sanitize_preprocessors = _sanitize

# Late work: the due date is the assignment's in the gradebook (make duedate DUE="..."), the
# submission time timestamp.txt in the student's folder (nbgrader's format, e.g.
# "2026-11-20 14:05:00 UTC"). Penalty: per_day of the score per day or part of one late,
# at most cap of it. Re-run make autograde after changing either.
c.AssignLatePenalties.plugin_class = LatePenalty
c.LatePenalty.per_day = 0.1
c.LatePenalty.cap = 0.5

# Formgrader (make formgrader): this course uses no exchange (submissions come from an LMS
# download or by hand). An exchange folder inside grading/ and the gradebook's own default
# course id keep formgrader from warning about a missing exchange or course id.
c.Exchange.root = os.path.abspath("grading/exchange")
c.CourseDirectory.course_id = "default_course"

# Feedback: nbgrader renders the autograded notebook, hidden tests included, unless told not to.
# ReadableFeedback: stage headings, each hint once, wrapped lines, formulas drawn offline (MathML).
# FeedbackClearHiddenTests: nbgrader's, without a config warning on every run.
c.GenerateFeedback.preprocessors = [GetGrades, FeedbackClearHiddenTests, CSSHTMLHeaderPreprocessor, ReadableFeedback]

# LMS downloads (nbgrader zip_collect): the zip goes in grading/downloaded/<assignment>/archive/.
# The student id comes from the file name (nbgrader matches the whole path); this pattern
# reads Canvas's names, <name>_[LATE_]<user id>_<submission id>_<file>[-<n>].ipynb (another LMS:
# docs/instructors/nbgrader.md, "Collecting from an LMS").
c.ZipCollectApp.downloaded_directory = "grading/downloaded"
c.FileNameCollectorPlugin.named_regexp = (
    r".*/(?P<student_id>[^_/]+)_(?:LATE_)?\d+_\d+_(?P<file_id>[^/]+?)(?:-\d+)?\.ipynb$")

# Export: a column per stage as well as the total (make export -> grading/grades.csv).
c.ExportApp.plugin_class = StageCsvExport
