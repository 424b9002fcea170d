"""The toy chapter's ``CHAPTER``: one graded stage of two checks (4 + 6 points)."""

from autograder.core.chapter import Chapter

CHAPTER = Chapter(
    id="toy_double",
    title="Doubling a tensor",
    stage_modules=("toy_chapter.checks",),
)
