"""Grading engine for the chapter "Coding Attention Mechanisms".

One engine, several front ends: the CLI (``python -m autograder``), the notebook's test
cells (:func:`autograder.frontends.notebook.grade_stage`), nbgrader and CI all run the same checks.
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
