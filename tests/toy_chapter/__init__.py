"""A toy chapter defined entirely outside the package: one stage, ``double(x)`` = 2 * x.

It shows (and tests/e2e/test_toy_chapter.py proves) that a chapter is data: the engine, the
command line and the CI front end grade it with no edit to ``autograder/``. The chapter lives
in :mod:`toy_chapter.chapter`, so that ``--chapter toy_chapter.chapter`` names it by a dotted
module path; it is re-exported here so that the bare package name defines ``CHAPTER`` too.
"""

from toy_chapter.chapter import CHAPTER

__all__ = ["CHAPTER"]
