"""checks/structure.py: what a module's description (``info``) must hold."""

from __future__ import annotations

import copy

import pytest

from autograder.chapters.ch03_attention.checks.structure import (
    covers_context,
    dropout_structure,
    linear_structure,
    mask_structure,
)
from autograder.core.failures import CheckFailure

from .conftest import submission, variant

QKV = ["W_query", "W_key", "W_value"]


@pytest.fixture(scope="module")
def info():
    """The description the workspace gives of the book's CausalAttention(4, 3, 7, 0.25)."""
    return submission(CausalAttention=variant(None)).build("CausalAttention", 4, 3, 7, 0.25, seed=0).info


def test_the_books_module_has_the_right_structure(info):
    linear_structure(info, QKV, [3, 4], bias=False)
    dropout_structure(info, 0.25)
    mask_structure(info, 7)


def test_qkv_bias_is_seen():
    info = submission(CausalAttention=variant(None)).build("CausalAttention", 4, 3, 7, 0.0, qkv_bias=True, seed=0).info
    linear_structure(info, QKV, [3, 4], bias=True)
    with pytest.raises(CheckFailure, match="has a bias with qkv_bias=False"):
        linear_structure(info, QKV, [3, 4], bias=False)


def test_a_linear_with_the_wrong_shape_fails(info):
    with pytest.raises(CheckFailure, match=r"`W_query.weight` has shape \[3, 4\], expected \[4, 3\]"):
        linear_structure(info, QKV, [4, 3], bias=False)


def test_a_missing_linear_fails(info):
    with pytest.raises(CheckFailure, match="`W_out` should be an nn.Linear, found missing"):
        linear_structure(info, ["W_out"], [3, 4], bias=False)


def test_a_plain_parameter_is_no_linear():
    info = {"modules": {}, "params": {"W_query": [4, 3]}}
    with pytest.raises(CheckFailure, match="found a parameter"):
        linear_structure(info, ["W_query"], [3, 4], bias=False)


def test_another_layer_class_is_no_linear(info):
    wrong = copy.deepcopy(info)
    wrong["modules"]["W_key"]["class"] = "Conv1d"
    with pytest.raises(CheckFailure, match="`W_key` should be an nn.Linear, found Conv1d"):
        linear_structure(wrong, QKV, [3, 4], bias=False)


def test_dropout_with_another_p_fails(info):
    with pytest.raises(CheckFailure, match="p=0.25, expected 0.5"):
        dropout_structure(info, 0.5)


def test_a_missing_dropout_fails(info):
    wrong = copy.deepcopy(info)
    del wrong["modules"]["dropout"]
    with pytest.raises(CheckFailure, match="no nn.Dropout named `dropout`"):
        dropout_structure(wrong, 0.25)


def test_a_mask_for_another_context_fails(info):
    with pytest.raises(CheckFailure, match=r"shape \[7, 7\], expected \[6, 6\]"):
        mask_structure(info, 6)


def test_a_missing_mask_fails():
    with pytest.raises(CheckFailure, match="no buffer named `mask`"):
        mask_structure({"buffers": {}, "plain_tensors": {}}, 4)


def test_a_mask_as_a_plain_attribute_fails():
    info = {"buffers": {}, "plain_tensors": {"mask": {"shape": [4, 4]}}}
    with pytest.raises(CheckFailure, match="plain tensor attribute, not a registered buffer"):
        mask_structure(info, 4)


def test_a_mask_held_as_a_parameter_is_named():
    with pytest.raises(CheckFailure, match="`mask` is an nn.Parameter") as failed:
        mask_structure({"buffers": {}, "params": {"mask": [4, 4]}}, 4)
    assert failed.value.hint.mistake == "mask_as_parameter" and "nn.Parameter" in failed.value.hint.text(1)


@pytest.mark.parametrize("shape, covers", [
    ([5, 5], True), ([1, 1, 5, 5], True), ([1, 5, 5], True),
    ([5, 4], False), ([4, 4], False), ([2, 5, 5], False), ([5], False),
])
def test_covers_context(shape, covers):
    assert covers_context(shape, 5) is covers
