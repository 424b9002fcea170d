"""The toy chapter's ``CHAPTER``: one graded stage of two checks (4 + 6 points)."""

from autograder.core.chapter import Chapter, Stage

CHAPTER = Chapter(
    id="toy_double",
    title="Doubling a tensor",
    declared_stages=(Stage(1, "double", "Double a tensor", ("double",)),),
    check_modules=("toy_chapter.checks",),
)
