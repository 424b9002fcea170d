"""Grading engine for the chapter "Coding Attention Mechanisms": the CLI, the notebook's test
cells, nbgrader and CI all run the same checks.
"""

import os
import sys
from pathlib import Path

# `python -m autograder` puts the working directory first on sys.path, where a student's torch.py
# or json.py (in their repository) would run inside the grader: it goes before anything is imported.
_ARGV = sys.orig_argv
if "-m" in _ARGV and _ARGV[_ARGV.index("-m") + 1:][:1] == ["autograder"] and sys.path[:1] in ([""], [os.getcwd()]):
    del sys.path[0]

from autograder.sandbox.child import HANDSHAKE  # noqa: E402

# The instructor's checkout (solutions/, tests/, the Makefile), or site-packages.
CHECKOUT = Path(__file__).resolve().parent.parent

__all__ = ["CHECKOUT", "__version__", "grade_stage"]
__version__ = "0.1.0"


def grade_stage(chapter_id: str, number, namespace: dict, **options):
    """A notebook test cell (:func:`autograder.frontends.students.notebook.grade_stage`); inside the
    grading worker, which may not read the front ends, it grades nothing."""
    if HANDSHAKE in os.environ:
        return None
    from autograder.frontends.students.notebook import grade_stage as grade

    return grade(chapter_id, number, namespace, **options)
