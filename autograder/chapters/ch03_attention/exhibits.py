"""The attention weights of a failing example, for the notebook's heatmap: the expected ones, and
the student's where their output matches the correct attention or a known mistake."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.compare import FLOAT32, close


@dataclass
class AttentionExhibit:
    """Head 0 of the first sequence: (num_tokens, num_tokens) weights, rows are queries."""

    expected: torch.Tensor
    student: torch.Tensor | None  # None: the student's output matches no computation the grader knows
    example: str  # the module call and sizes, in words
    reading: str  # how the student's weights were obtained, or why they are missing


def _queries_keys(spec, state: dict, x: torch.Tensor, sizes: Sizes):
    """Queries and keys of head 0, (batch, num_tokens, head_dim), from the student's weights."""
    x = R.d(x)
    if spec.v1_style:
        q, k = x @ R.d(state["W_query"]), x @ R.d(state["W_key"])
    elif spec.name == "MultiHeadAttentionWrapper":
        q, k = R.linear(state, "heads.0.W_query", x), R.linear(state, "heads.0.W_key", x)
    else:
        q, k = R.linear(state, "W_query", x), R.linear(state, "W_key", x)
        if spec.name == "MultiHeadAttention":
            q, k = q[..., :sizes.head_dim], k[..., :sizes.head_dim]
    if q.dim() == 2:
        q, k = q.unsqueeze(0), k.unsqueeze(0)
    return q, k


def _weights(spec, q, k, mistake: str | None, d_in: int) -> torch.Tensor:
    """The attention weights: attention with the identity as values returns the weights."""
    t = q.shape[-2]
    eye = torch.eye(t, dtype=q.dtype).expand(*q.shape[:-1], t)
    return R.attention_variant(q, k, eye, scale=1 / math.sqrt(k.shape[-1]), causal=spec.causal,
                               mistake=mistake, d_in=d_in)


def attention_weights(spec, by_check: dict | None = None):
    """A stage's exhibit: the expected and the student's attention weights of ``spec``'s module on the failing
    example, the book's call when the check drew none (``by_check``: another spec, by check id)."""
    return lambda sub, check_id, sizes: _exhibit(sub, (by_check or {}).get(check_id, spec), sizes)


def _exhibit(sub, spec, sizes: Sizes | None) -> AttentionExhibit:
    if sizes is None:
        sizes, module, x = spec.book.sizes, spec.book_module(sub), spec.book_input
    else:
        module, x = spec.build(sub, sizes), spec.input(sizes)
    out = module(x)
    state = module.state()
    q, k = _queries_keys(spec, state, x, sizes)
    expected = _weights(spec, q, k, None, x.shape[-1])[0]
    example = f"{module.what}(x), x of shape {list(x.shape)}, seed {sizes.seed}"
    try:
        reference = spec.reference(state, x, sizes, None)
    except (KeyError, RuntimeError):
        return AttentionExhibit(expected, None, example, "")
    if close(out, reference.float(), FLOAT32):
        return AttentionExhibit(expected, expected.clone(), example,
                                "your output is right on this example: the check failed on something else")
    for mistake in spec.mistakes:
        if mistake not in R.ATTENTION_MISTAKES:
            continue  # a mistake in how heads are split or merged: no single weight matrix to show
        try:
            variant = spec.reference(state, x, sizes, mistake)
        except (KeyError, RuntimeError):
            continue
        if close(out, variant.float(), FLOAT32) and not torch.isnan(variant).all():
            student = _weights(spec, q, k, mistake, x.shape[-1])[0]
            return AttentionExhibit(expected, student, example,
                                    f"yours are read off your output, which equals attention with a known "
                                    f"mistake ({mistake.replace('_', ' ')}; see the hint)")
    return AttentionExhibit(expected, None, example,
                            "your output matches no computation the grader knows, so your weights "
                            "cannot be read off it; compare the expected weights with yours")
