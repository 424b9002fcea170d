"""Chapter 3 of *Build a Large Language Model (From Scratch)*: Coding Attention Mechanisms. One
module per stage under :mod:`.checks`; beside them, the parts several stages share."""

from pathlib import Path

from autograder.chapters.ch03_attention.hints import COMMON_ERROR_HINTS
from autograder.core.chapter import Chapter

CHAPTER = Chapter(
    id="ch03_attention",
    title="Coding Attention Mechanisms",
    stage_modules=tuple(f"{__name__}.checks.{name}" for name in (
        "s1_softmax", "s2_scores", "s3_self_attention", "s4_causal", "s5_wrapper", "s6_mha", "s7_gpt2",
        "s8_efficiency")),
    # which stages are graded, their points, the bonus: make release, from the source notebook
    course_path=Path(__file__).with_name("course.json"),
    common_error_hints=COMMON_ERROR_HINTS,
)
