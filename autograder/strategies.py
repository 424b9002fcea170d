"""Hypothesis strategies and the grading profile, shared by every stage.

Sizes are drawn *distinct* per dimension (batch, tokens, d_in, d_out, heads), so a
transposed axis or a softmax over the wrong dimension cannot pass by symmetry. Tensor
values come from a drawn seed (fast, reproducible, shrinks to seed 0); small softmax
inputs are drawn value by value, so a failure shows the smallest failing input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.failures import NotImplementedYet, StageAborted

# One profile for grading: fixed example counts, no deadline (student code may be slow on
# its first call), derandomized, no example database: the same submission, the same grade.
GRADING = settings(
    derandomize=True,
    deadline=None,
    database=None,
    verbosity=Verbosity.quiet,
    report_multiple_bugs=False,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
)

# Examples per property: enough to cover every size class below a few times, few enough
# that a full grade stays within seconds (each example is one or two calls to the worker).
EXAMPLES = {"function": 25, "module": 10, "cheap_module": 15}

# A different seed for the hidden tests of the instructor's notebook (other examples).
_state = {"seed": None}


def use_seed(value: int | None) -> None:
    _state["seed"] = value


@dataclass(frozen=True)
class Sizes:
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
        heads = f", num_heads={self.num_heads}" if self.num_heads > 1 else ""
        return (f"batch={self.batch}, num_tokens={self.tokens}, d_in={self.d_in}, d_out={self.d_out}, "
                f"context_length={self.context_length}{heads}, seed={self.seed}")


@st.composite
def attention_sizes(draw, *, heads: bool = False, min_batch: int = 1, min_tokens: int = 1) -> Sizes:
    num_heads = draw(st.integers(2, 4)) if heads else 1
    head_dim = draw(st.integers(1, 3)) if heads else draw(st.integers(1, 6))
    d_out = num_heads * head_dim
    pool = [n for n in range(1, 10) if n != d_out]
    batch, tokens, d_in = draw(st.lists(st.sampled_from(pool), min_size=3, max_size=3, unique=True)
                               .filter(lambda v: v[0] >= min_batch and v[1] >= min_tokens))
    extra = draw(st.integers(0, 3))
    return Sizes(batch, tokens, d_in, d_out, tokens + extra, num_heads, draw(st.integers(0, 2**16)))


def distinct_shape(min_dims: int = 1, max_dims: int = 3, max_side: int = 6):
    return st.integers(min_dims, max_dims).flatmap(
        lambda n: st.lists(st.integers(1 if n == 1 else 2, max_side), min_size=n, max_size=n, unique=True)
        .map(tuple))


def float_arrays(shape_strategy=None, bound: float = 10.0):
    """Bounded, NaN-free float32 values, drawn element by element (shrinkable)."""
    return (shape_strategy or distinct_shape()).flatmap(
        lambda shape: hnp.arrays(np.float32, shape, elements=st.floats(
            -bound, bound, width=32, allow_nan=False, allow_infinity=False)))


def tensor(shape, seed: int, low: float = -2.0, high: float = 2.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(int(seed))
    return torch.empty(tuple(shape)).uniform_(low, high, generator=g)


def run_property(body, *strategies, examples: int) -> None:
    """Run ``body`` on drawn examples; a CheckFailure from the smallest failing example is
    re-raised as it is. A stopped worker or a stub ends the search at once."""

    class _Stop(BaseException):
        def __init__(self, exc):
            self.exc = exc

    @settings(GRADING, max_examples=examples)
    @given(st.tuples(*strategies))
    def prop(args):
        try:
            body(*args)
        except (StageAborted, NotImplementedYet) as exc:
            raise _Stop(exc) from None

    if _state["seed"] is not None:
        prop = hypothesis_seed(_state["seed"])(prop)
    try:
        prop()
    except _Stop as stop:
        raise stop.exc from None
