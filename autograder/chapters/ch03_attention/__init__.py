"""Chapter 3 of *Build a Large Language Model (From Scratch)*: Coding Attention Mechanisms.

Owns the chapter's ``CHAPTER``: the eight stages it declares (the course file, ``course.json``,
written by ``make release`` from the source notebook, says which are graded and their points) (the names each defines), the checks of each
stage (:mod:`.checks`), the trusted reference computations and their known mistakes
(:mod:`.reference`), the hints for exceptions (:mod:`.hints`), the book's printed tensors
(:mod:`.book`), the attention exhibit of the report (:mod:`.exhibits`) and the benchmarks
(:mod:`.bench`: :mod:`.bench_attention` and :mod:`.bench_grader`).
"""

from pathlib import Path

from autograder.chapters.ch03_attention.checks.policy import call_policy
from autograder.chapters.ch03_attention.hints import ERROR_HINTS
from autograder.core.chapter import Chapter, Stage

CHAPTER = Chapter(
    id="ch03_attention",
    title="Coding Attention Mechanisms",
    declared_stages=(
        Stage(1, "softmax", "Naive softmax", ("softmax_naive",)),
        Stage(2, "scores", "Attention scores, weights and context vectors",
              ("compute_attn_scores", "compute_attn_weights", "compute_context_vecs")),
        Stage(3, "self_attention", "Self-attention with trainable weights", ("SelfAttention_v1", "SelfAttention_v2")),
        Stage(4, "causal", "Causal attention with dropout", ("CausalAttention",)),
        Stage(5, "wrapper", "Multi-head attention wrapper", ("MultiHeadAttentionWrapper",)),
        Stage(6, "mha", "Multi-head attention with weight splits", ("MultiHeadAttention",)),
        Stage(7, "gpt2", "A GPT-2-size attention module", ("build_gpt2_small_mha",)),
        Stage(8, "efficiency", "Efficiency lab",
              ("softmax_stable", "FusedQKVAttention", "attn_weights_bytes", "SDPAMultiHeadAttention"), bonus=True),
    ),
    check_modules=tuple(f"autograder.chapters.ch03_attention.checks.{name}" for name in (
        "s1_softmax", "s2_scores", "s3_self_attention", "s4_causal", "s5_wrapper", "s6_mha", "s7_gpt2",
        "s8_efficiency")),
    error_hints=ERROR_HINTS,
    call_policy=call_policy,
    attention_exhibit="autograder.chapters.ch03_attention.exhibits:attention_exhibit",
    # GPT-2-size forward passes at 1,024 tokens: the worker's longest stage
    run_first=("gpt2",),
    # which stages are graded, their points, the bonus: make release, from the source notebook
    course_path=Path(__file__).with_name("course.json"),
)
