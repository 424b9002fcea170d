"""The examples this chapter's checks draw, distinct per dimension so that a transposed axis or a
softmax over the wrong one cannot pass by symmetry."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from hypothesis import strategies as st

from autograder.chapters.ch03_attention.hints import shape_error_hint
from autograder.core.failures import Hint
from autograder.core.strategies import Example


@dataclass(frozen=True)
class Sizes(Example):
    """A batch of sequences for the modules of stages 3 to 8 (and the sizes of their layers)."""
    batch: int
    tokens: int
    d_in: int
    d_out: int
    context_length: int
    num_heads: int
    seed: int

    @property
    def head_dim(self) -> int:
        return self.d_out // self.num_heads

    def __str__(self) -> str:
        # words that fit both constructors: d_out is MultiHeadAttention's whole width, one head's for the wrapper
        width = f"d_out={self.d_out}" if self.num_heads == 1 else \
            f"num_heads={self.num_heads}, head_dim={self.head_dim}, output width={self.d_out}"
        return (f"batch={self.batch}, num_tokens={self.tokens}, d_in={self.d_in}, {width}, "
                f"context_length={self.context_length}, seed={self.seed}")

    def read_error(self, message: str, fallback: Hint | None = None) -> Hint | None:
        """A shape error read against these sizes (:func:`.hints.shape_error_hint`)."""
        return shape_error_hint(message, self, fallback)


@dataclass(frozen=True)
class Tokens(Example):
    """A single sequence for stage 2: ``num_tokens`` embeddings of width ``d``."""
    num_tokens: int
    d: int
    seed: int

    def __str__(self) -> str:
        return f"num_tokens={self.num_tokens}, d={self.d}, seed={self.seed}"


# num_tokens != d, so inputs.T @ inputs cannot pass for inputs @ inputs.T
token_matrices = st.builds(Tokens, st.integers(2, 8), st.integers(1, 6), st.integers(0, 2**16)) \
    .filter(lambda t: t.num_tokens != t.d)


@functools.cache
def _batch_tokens_d_in(d_out: int, min_batch: int, min_tokens: int) -> st.SearchStrategy:
    """Three distinct sizes other than ``d_out``, made once per arguments (hypothesis reads the filter's source)."""
    pool = [n for n in range(1, 10) if n != d_out]
    return st.lists(st.sampled_from(pool), min_size=3, max_size=3, unique=True) \
        .filter(lambda v: v[0] >= min_batch and v[1] >= min_tokens)


@st.composite
def attention_sizes(draw, *, heads: bool = False, min_batch: int = 1, min_tokens: int = 1,
                    min_head_dim: int = 1) -> Sizes:
    num_heads = draw(st.integers(2, 4)) if heads else 1
    head_dim = draw(st.integers(min_head_dim, 3 if heads else 6))
    d_out = num_heads * head_dim
    batch, tokens, d_in = draw(_batch_tokens_d_in(d_out, min_batch, min_tokens))
    extra = draw(st.integers(0, 3))
    return Sizes(batch, tokens, d_in, d_out, tokens + extra, num_heads, draw(st.integers(0, 2**16)))
