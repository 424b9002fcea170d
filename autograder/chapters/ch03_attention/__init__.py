"""Chapter 3 of *Build a Large Language Model (From Scratch)*: Coding Attention Mechanisms.

Owns the chapter's ``CHAPTER``: its eight stage modules (:mod:`.checks`), each ending with its
``STAGE`` (the stage, the names it defines, its hints, call policy, exhibit, step programs and
book tensors) after its checks (the course file, ``course.json``, written by ``make release``
from the source notebook, says which stages are graded and their points), the trusted
reference computations and their known mistakes (:mod:`.reference`), the examples its checks draw
(:mod:`.examples`), the hints for exceptions (:mod:`.hints`), the book's printed tensors
(:mod:`.book`), the attention exhibit of the report (:mod:`.exhibits`) and the benchmarks
(:mod:`.bench`: :mod:`.bench_attention` and :mod:`.bench_grader`).
"""

from pathlib import Path

from autograder.chapters.ch03_attention.hints import COMMON_ERROR_HINTS
from autograder.core.chapter import Chapter

CHAPTER = Chapter(
    id="ch03_attention",
    title="Coding Attention Mechanisms",
    # one module per stage: its checks and its STAGE (the stage, its hints, call policy, exhibit,
    # step programs and book tensors)
    stage_modules=tuple(f"autograder.chapters.ch03_attention.checks.{name}" for name in (
        "s1_softmax", "s2_scores", "s3_self_attention", "s4_causal", "s5_wrapper", "s6_mha", "s7_gpt2",
        "s8_efficiency")),
    # which stages are graded, their points, the bonus: make release, from the source notebook
    course_path=Path(__file__).with_name("course.json"),
    # what an error means in any stage, in attention's words, before core's general table
    common_error_hints=COMMON_ERROR_HINTS,
)
