"""autograder.core.hints: what an exception of the student's code means.

``error_hint`` reads the stage's own table before the general one; ``shape_error_hint`` reads the
two sizes of a shape error against the drawn example's sizes (num_tokens, context_length, ...).
"""

from __future__ import annotations

import pytest

from autograder.chapters.ch03_attention.hints import ERROR_HINTS
from autograder.core.failures import Diagnosis
from autograder.core.hints import error_hint, shape_error_hint
from autograder.core.strategies import Sizes

BROADCAST = "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"
GENERAL_SHAPE_HINT = error_hint("RuntimeError", BROADCAST)
DEFAULT_HINT = error_hint("KeyError", "'zzz'")


# -- error_hint ---------------------------------------------------------------------------------

def test_general_table_explains_a_shape_mismatch():
    assert "shape mismatch" in GENERAL_SHAPE_HINT


def test_stage_table_comes_before_the_general_one():
    stage = [(r"must match the size", "the stage's own words")]
    assert error_hint("RuntimeError", BROADCAST, stage) == "the stage's own words"


def test_first_matching_row_of_the_stage_table_wins():
    stage = [(r"no match here", "not this"), (r"tensor a", "first match"), (r"tensor b", "second match")]
    assert error_hint("RuntimeError", BROADCAST, stage) == "first match"


def test_a_stage_table_that_does_not_match_falls_back_to_the_general_one():
    assert error_hint("RuntimeError", BROADCAST, [(r"dtype", "not this")]) == GENERAL_SHAPE_HINT


def test_the_exception_type_can_be_matched():
    stage = [(r"^ValueError", "the constructor rejected the sizes")]
    assert error_hint("ValueError", "anything", stage) == "the constructor rejected the sizes"
    assert error_hint("TypeError", "anything", stage) != "the constructor rejected the sizes"


def test_ch03_stage_tables_come_before_the_general_one():
    softmax_hint = error_hint("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
                              ERROR_HINTS["softmax"])
    assert "dim=-1" in softmax_hint
    assert softmax_hint != error_hint("IndexError", "Dimension out of range (expected to be in range of [-1, 0], "
                                                    "but got 1)")
    causal_hint = error_hint("RuntimeError", BROADCAST, ERROR_HINTS["causal"])
    assert "slice the mask" in causal_hint and causal_hint != GENERAL_SHAPE_HINT


@pytest.mark.parametrize("exc_type, message, words", [
    ("RuntimeError", "view size is not compatible with input tensor's size and stride", ".contiguous()"),
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "shape mismatch"),
    ("RuntimeError", "masked_fill_ only supports boolean masks, but got mask with dtype float", "boolean mask"),
    ("RuntimeError", "Tensor on device cpu is not on the expected device meta!", "register_buffer"),
    pytest.param("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, "
                 "cuda:0 and cpu!", "register_buffer", id="cuda_and_cpu"),
    ("RuntimeError", "expected scalar type Float but found Double", "mixed dtypes"),
    ("NameError", "name 'torch' is not defined", "define it"),
    ("TypeError", "'Tensor' object is not callable", "not one"),
    ("AttributeError", "'CausalAttention' object has no attribute 'mask'", "super().__init__()"),
    ("TypeError", "__init__() takes 3 positional arguments but 5 were given", "signature"),
    ("AssertionError", "", "assert"),
    ("RecursionError", "maximum recursion depth exceeded", "calls itself"),
])
def test_general_table_names_the_usual_cause(exc_type, message, words):
    hint = error_hint(exc_type, message)
    assert words in hint, hint
    assert hint != DEFAULT_HINT


def test_an_unknown_error_gets_the_default_hint():
    assert "read the error" in DEFAULT_HINT


# -- shape_error_hint --------------------------------------------------------------------------

def sizes(batch=2, tokens=3, d_in=4, d_out=6, context_length=5, num_heads=1) -> Sizes:
    return Sizes(batch, tokens, d_in, d_out, context_length, num_heads, seed=0)


def broadcast_error(a: int, b: int) -> str:
    return f"RuntimeError: The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension 2"


def test_num_tokens_against_context_length_means_an_unsliced_mask():
    hint = shape_error_hint(broadcast_error(3, 5), sizes(tokens=3, context_length=5), "fallback")
    assert "num_tokens=3, context_length=5" in hint, hint
    assert "[:num_tokens, :num_tokens]" in hint, hint


def test_the_pair_is_read_in_either_order():
    assert shape_error_hint(broadcast_error(5, 3), sizes(tokens=3, context_length=5)) == \
        shape_error_hint(broadcast_error(3, 5), sizes(tokens=3, context_length=5))


def test_num_tokens_against_num_heads_means_a_missing_transpose():
    hint = shape_error_hint(broadcast_error(3, 2), sizes(tokens=3, num_heads=2, d_out=4, context_length=3))
    assert "transpose(1, 2)" in hint and "head axis" in hint, hint
    assert hint.rank == Diagnosis.GENERIC  # the sizes say which axes meet, not which step moved them


def test_heads_are_not_read_into_a_single_head_example():
    """With one head, 2 is the batch, not num_heads: no word about heads."""
    hint = shape_error_hint(broadcast_error(3, 2), sizes(tokens=3, batch=2, context_length=3))
    assert "head" not in hint, hint
    assert "3 (= num_tokens or context_length) and 2 (= batch)" in hint, hint


def test_other_sizes_are_named():
    hint = shape_error_hint(broadcast_error(5, 6), sizes(tokens=5), "print the shapes")
    assert hint == "the sizes 5 (= num_tokens or context_length) and 6 (= d_out) do not fit together; print the shapes"


def test_a_matrix_product_error_is_read_too():
    hint = shape_error_hint("RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x4 and 6x2)", sizes())
    assert hint.startswith("the sizes 4 (= d_in) and 6 (= d_out) do not fit together; d_in meets d_out"), hint
    assert hint.rank == Diagnosis.GENERIC and hint.mistake == "observed_sizes"  # what the sizes show


def test_sizes_that_name_nothing_give_the_fallback():
    assert shape_error_hint(broadcast_error(7, 8), sizes(), "fallback") == "fallback"


def test_an_error_that_is_not_about_shapes_gives_the_fallback():
    assert shape_error_hint("RuntimeError: expected scalar type Float but found Double", sizes(), "fallback") == \
        "fallback"


# -- levels: what is wrong at level 1, the fixing code from level 2 on ---------------------------

def test_level_one_drops_the_marked_fix_and_its_comma():
    from autograder.core.hints import at_level, fix

    hint = Diagnosis("the sums lost their axis" + fix(", exp_x.sum(dim=-1, keepdim=True)"), Diagnosis.NAMED,
                     mistake="no_keepdim")
    shown = at_level(hint, 1)
    assert shown == "the sums lost their axis"
    assert (shown.rank, shown.mistake) == (Diagnosis.NAMED, "no_keepdim")
    assert at_level(hint, 2) == "the sums lost their axis, exp_x.sum(dim=-1, keepdim=True)"


def test_level_one_leaves_no_empty_parenthesis_or_separator():
    from autograder.core.hints import at_level, fix

    assert at_level("transpose the keys (" + fix("keys.transpose(1, 2); ") + "keys.T reverses the batch)", 1) == \
        "transpose the keys (keys.T reverses the batch)"
    assert at_level("slice the mask (" + fix("mask[:n, :n]") + ") first", 1) == "slice the mask first"
    assert at_level("what is wrong: " + fix("the line"), 1) == "what is wrong"


def test_levels_of_an_ambiguous_hint_apply_to_its_alternatives():
    from autograder.core.hints import at_level, fix

    a, b = "A" + fix(": a()"), "B" + fix(": b()")
    hint = Diagnosis(f"{a}; or, as likely here: {b}", Diagnosis.AMBIGUOUS, (a, b))
    assert at_level(hint, 1).alternatives == ("A", "B")
    assert at_level(hint, 1) == "A; or, as likely here: B"


def test_the_general_table_pastes_no_fixing_line_at_level_one():
    from autograder.core.hints import _ERROR_HINTS, at_level

    assert not [hint for _, hint in _ERROR_HINTS if "self.mask.bool()[" in at_level(hint, 1)
                or "d_out // num_heads" in at_level(hint, 1)]
