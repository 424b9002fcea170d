"""The chapter's hint tables (each stage's ERROR_HINTS, hints.COMMON_ERROR_HINTS, the reference's known
mistakes): at the default hint level none holds code of the solution notebook's answers; the next
level names the fix. The chapter's tables come before core's general one; ``shape_error_hint``
reads the two sizes of a shape error against the drawn example's sizes (num_tokens,
context_length, ...)."""

from __future__ import annotations

import pytest
import torch
from support import pasted_solution, solution_fragments

from autograder.chapters.ch03_attention import CHAPTER
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.chapters.ch03_attention.hints import COMMON_ERROR_HINTS, shape_error_hint
from autograder.core.failures import GENERIC, Hint, StudentCodeError, as_hint
from autograder.core.hints import _ERROR_HINTS, error_hint

FRAGMENTS = solution_fragments()


def at_level(hint, level: int) -> str:
    return as_hint(hint).text(level)


def _tables() -> dict[str, str]:
    hints = {f"error {s.id} {pattern}": hint for s in CHAPTER.declared_stages
             for pattern, hint in CHAPTER.parts(s).error_hints}
    hints |= {f"chapter {pattern}": hint for pattern, hint in COMMON_ERROR_HINTS}
    hints |= {f"general {pattern}": hint for pattern, hint in _ERROR_HINTS}
    for table in (R.softmax_mistakes(torch.zeros(2, 3, 4)), R.scores_mistakes(torch.zeros(3, 2)),
                  R.WEIGHTS_MISTAKES, R.CONTEXT_MISTAKES):
        hints |= {f"function {name}": hint for name, (_, hint) in table.items()}
    for table in (R.ATTENTION_MISTAKES, R.WRAPPER_MISTAKES, R.MHA_MISTAKES, R.SDPA_MASK_MISTAKES):
        hints |= {f"module {name}": hint for name, hint in table.items()}
    return hints


def test_the_solution_gives_fragments_to_compare_with():
    assert "exp_x.sum(dim=-1,keepdim=True)" in FRAGMENTS
    assert "torch.cat([head(x)forheadinself.heads],dim=-1)" in FRAGMENTS


def test_no_hint_of_the_tables_pastes_the_solution_at_the_default_level():
    pasted = {name: found for name, hint in _tables().items() if (found := pasted_solution(at_level(hint, 1), FRAGMENTS))}
    assert not pasted, pasted


def test_the_next_level_names_the_fix_where_the_default_leaves_it_out():
    tables = _tables()
    withheld = {name for name, hint in tables.items() if at_level(hint, 2) != at_level(hint, 1)}
    assert len(withheld) >= 20
    assert all(pasted_solution(at_level(tables[name], 2), FRAGMENTS) or "`" in at_level(tables[name], 2) or name
               for name in withheld)
    assert pasted_solution(at_level(R.WRAPPER_MISTAKES["concat_batch"], 2), FRAGMENTS)


# -- the chapter's tables before core's general one -----------------------------------------------

BROADCAST = "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"
GENERAL_SHAPE_HINT = error_hint("RuntimeError", BROADCAST).text()


def test_ch03_stage_tables_come_before_the_general_one():
    softmax_hint = error_hint("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
                              CHAPTER.error_hints["softmax"]).text()
    assert "the last dimension, which every tensor has" in softmax_hint
    assert softmax_hint != error_hint("IndexError", "Dimension out of range (expected to be in range of [-1, 0], "
                                                    "but got 1)").text()
    causal_hint = error_hint("RuntimeError", BROADCAST, CHAPTER.error_hints["causal"]).text()
    assert "slice the mask" in causal_hint and causal_hint != GENERAL_SHAPE_HINT


@pytest.mark.parametrize("exc_type, message, words", [
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "queries, keys"),
    ("RuntimeError", "masked_fill_ only supports boolean masks, but got mask with dtype float", "boolean mask"),
    ("RuntimeError", "Tensor on device cpu is not on the expected device meta!", "register_buffer"),
    pytest.param("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, "
                 "cuda:0 and cpu!", "register_buffer", id="cuda_and_cpu"),
    ("RuntimeError", "DefaultCPUAllocator: can't allocate memory: you tried to allocate 10 GB", "attention needs"),
    ("TypeError", "'float' object cannot be interpreted as an integer", "integer division"),
    ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)", "(batch, tokens, "),
    ("AttributeError", "'CausalAttention' object has no attribute 'mask'", "super().__init__()"),
    ("RuntimeError", "view size is not compatible with input tensor's size and stride", ".contiguous()"),
])
def test_a_stage_without_a_table_reads_errors_in_the_chapters_words(exc_type, message, words):
    hint = error_hint(exc_type, message, CHAPTER.common_error_hints)
    assert words in hint.text(2), hint


def test_a_sizes_example_reads_a_shape_error_of_the_students_code():
    """core.strategies names the failing example and asks it (Example.read_error) to read the error."""
    from hypothesis import strategies as st

    from autograder.core.strategies import run_property

    def unsliced(sizes: Sizes):
        raise StudentCodeError(f"RuntimeError: The size of tensor a ({sizes.tokens}) must match the size of "
                               f"tensor b ({sizes.context_length}) at non-singleton dimension 2", "fallback")

    with pytest.raises(StudentCodeError) as failure:
        run_property(unsliced, st.just(Sizes(2, 3, 4, 6, 5, 1, seed=0)), examples=1)
    assert failure.value.hint.mistake == "mask_not_sliced", failure.value.hint
    assert failure.value.example == Sizes(2, 3, 4, 6, 5, 1, seed=0)


# -- shape_error_hint --------------------------------------------------------------------------

def sizes(batch=2, tokens=3, d_in=4, d_out=6, context_length=5, num_heads=1) -> Sizes:
    return Sizes(batch, tokens, d_in, d_out, context_length, num_heads, seed=0)


def broadcast_error(a: int, b: int) -> str:
    return f"RuntimeError: The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension 2"


def test_num_tokens_against_context_length_means_an_unsliced_mask():
    hint = shape_error_hint(broadcast_error(3, 5), sizes(tokens=3, context_length=5), Hint("fallback")).text(2)
    assert "num_tokens=3, context_length=5" in hint, hint
    assert "[:num_tokens, :num_tokens]" in hint, hint


def test_the_pair_is_read_in_either_order():
    assert shape_error_hint(broadcast_error(5, 3), sizes(tokens=3, context_length=5)) == \
        shape_error_hint(broadcast_error(3, 5), sizes(tokens=3, context_length=5))


def test_num_tokens_against_num_heads_means_a_missing_transpose():
    hint = shape_error_hint(broadcast_error(3, 2), sizes(tokens=3, num_heads=2, d_out=4, context_length=3))
    assert "transpose(1, 2)" in hint.text() and "head axis" in hint.text(), hint
    assert hint.rank == GENERIC  # the sizes say which axes meet, not which step moved them


def test_heads_are_not_read_into_a_single_head_example():
    """With one head, 2 is the batch, not num_heads: no word about heads."""
    hint = shape_error_hint(broadcast_error(3, 2), sizes(tokens=3, batch=2, context_length=3)).text(2)
    assert "head" not in hint, hint
    assert "3 (= num_tokens or context_length) and 2 (= batch)" in hint, hint


def test_other_sizes_are_named():
    hint = shape_error_hint(broadcast_error(5, 6), sizes(tokens=5), Hint("print the shapes", "x.shape"))
    assert hint.text(2) == "the sizes 5 (= num_tokens or context_length) and 6 (= d_out) do not fit together; print " \
        "the shapes: x.shape"


def test_a_matrix_product_error_is_read_too():
    hint = shape_error_hint("RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x4 and 6x2)", sizes())
    assert hint.text().startswith("the sizes 4 (= d_in) and 6 (= d_out) do not fit together; d_in meets d_out"), hint
    assert hint.rank == GENERIC and hint.mistake == "observed_sizes"  # what the sizes show


def test_sizes_that_name_nothing_give_the_fallback():
    assert shape_error_hint(broadcast_error(7, 8), sizes(), Hint("fallback")) == Hint("fallback")


def test_an_error_that_is_not_about_shapes_gives_the_fallback():
    assert shape_error_hint("RuntimeError: expected scalar type Float but found Double", sizes(), Hint("fallback")) == \
        Hint("fallback")
