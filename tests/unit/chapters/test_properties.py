"""checks/properties.py on the book's CausalAttention, in process (LocalTransport): each property
passes the right module and fails the module with the mistake it is there to catch."""

from __future__ import annotations

import pytest
import torch

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks import s4_causal
from autograder.chapters.ch03_attention.checks.properties import (
    batch_independence,
    causality,
    dropout_behaviour,
    function_side_effects,
    gradients,
    module_side_effects,
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
    dropout_behaviour(SPEC, right, SIZES)
    with pytest.raises(CheckFailure, match="dropped, not the attention weights|0 or its eval value"):
        dropout_behaviour(SPEC, wrong("dropout_on_output"), SIZES)


def test_moves_to_device(right):
    moves_to_device(SPEC, right, SIZES)
    with pytest.raises(CheckFailure, match=r"after module.to\(device\) the forward pass fails"):
        moves_to_device(SPEC, wrong("mask_made_on_cpu"), SIZES)


@pytest.mark.parametrize("mistake, said", [("input_changed", "CausalAttention.forward changed its argument x in place (mul_)"),
                                           ("mask_changed", "CausalAttention.forward changed self.mask in place (mul_)"),
                                           ("random_output", "gave another output on its second call")])
def test_module_side_effects(right, mistake, said):
    module_side_effects(SPEC, right, SIZES)
    with pytest.raises(CheckFailure) as failure:
        module_side_effects(SPEC, wrong(mistake), SIZES)
    assert said in failure.value.hint.text(1)


def test_function_side_effects_name_the_argument_and_count_only_for_an_output_that_depends_on_it():
    x = torch.randn(3, 4)
    function_side_effects(submission(softmax_naive=lambda x: torch.softmax(x, -1)), "softmax_naive", x=x)
    with pytest.raises(CheckFailure) as failure:
        function_side_effects(submission(softmax_naive=lambda x: x.exp_() / x.sum(-1, keepdim=True)), "softmax_naive", x=x)
    assert failure.value.hint.text(1) == "softmax_naive changed its argument x in place (exp_): work on a new tensor"
    assert "x.clone() first" in failure.value.hint.text(2)
    with pytest.raises(CheckFailure, match="gave the same output for other arguments"):
        function_side_effects(submission(softmax_naive=torch.zeros_like), "softmax_naive", x=x)
