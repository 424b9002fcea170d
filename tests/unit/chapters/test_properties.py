"""checks/properties.py on the book's CausalAttention, in process (LocalTransport): each property
passes the right module and fails the module with the mistake it is there to catch."""

from __future__ import annotations

import pytest

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks import s4_causal
from autograder.chapters.ch03_attention.checks.properties import (
    batch_independence,
    causality,
    dropout_behaviour,
    gradients,
    moves_to_device,
    row_sums,
)
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.failures import CheckFailure

from .conftest import submission, variant

SPEC = s4_causal.SPEC
SIZES = Sizes(batch=2, tokens=4, d_in=3, d_out=4, context_length=6, num_heads=1, seed=2)
QKV = ["W_query.weight", "W_key.weight", "W_value.weight"]


def wrong(mistake: str):
    return submission(CausalAttention=variant(mistake))


def test_causality(right):
    for position in range(SIZES.tokens - 1):
        causality(SPEC, right, SIZES, position)
    with pytest.raises(CheckFailure, match="changed when only tokens 1..3 changed") as failure:
        causality(SPEC, wrong("no_mask"), SIZES, 0)
    assert failure.value.hint.text() == R.ATTENTION_MISTAKES["no_mask"]


def test_row_sums(right):
    row_sums(SPEC, right, SIZES)
    with pytest.raises(CheckFailure, match="a row of weights sums to") as failure:
        row_sums(SPEC, wrong("softmax_wrong_dim"), SIZES)
    assert failure.value.hint.text() == R.ATTENTION_MISTAKES["softmax_wrong_dim"].text()


def test_batch_independence(right):
    batch_independence(SPEC, right, SIZES)
    with pytest.raises(CheckFailure, match="depends on the other sequences"):
        batch_independence(SPEC, wrong("batch_mixed"), SIZES)


def test_gradients(right):
    gradients(SPEC, right, SIZES, QKV)
    with pytest.raises(CheckFailure, match="no gradient reached W_key.weight"):
        gradients(SPEC, wrong("detached_keys"), SIZES, QKV)


def test_dropout_behaviour(right):
    dropout_behaviour(SPEC, right, SIZES, head_blocks=1)
    with pytest.raises(CheckFailure, match="dropped, not the attention weights|0 or its eval value"):
        dropout_behaviour(SPEC, wrong("dropout_on_output"), SIZES, head_blocks=1)


def test_moves_to_device(right):
    moves_to_device(SPEC, right, SIZES)
    with pytest.raises(CheckFailure, match=r"after module.to\(device\) the forward pass fails"):
        moves_to_device(SPEC, wrong("mask_made_on_cpu"), SIZES)
