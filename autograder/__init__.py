"""Grading engine for the chapter "Coding Attention Mechanisms".

One engine, several front ends: the CLI (``python -m autograder``), the notebook's test
cells (``from autograder import grade_stage``), nbgrader and CI all run the same checks.
"""

import os
from pathlib import Path

from autograder.sandbox.child import HANDSHAKE

# The folder that holds this package: the instructor's checkout (solutions/, tests/, the Makefile
# beside it), or site-packages where the grader is pip-installed.
CHECKOUT = Path(__file__).resolve().parent.parent

__all__ = ["CHECKOUT", "__version__", "grade_stage"]
__version__ = "0.1.0"


def grade_stage(chapter_id: str, number, namespace: dict, **options):
    """A notebook test cell: grade one stage on the objects in the kernel and print every check
    (:func:`autograder.frontends.students.notebook.grade_stage`). Importing it costs nothing, so the cell
    also runs inside the grading worker (its handshake in the environment), which may not read
    the grader's front ends: there it grades nothing."""
    if HANDSHAKE in os.environ:
        return None
    from autograder.frontends.students.notebook import grade_stage as grade

    return grade(chapter_id, number, namespace, **options)
