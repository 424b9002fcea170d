"""core/mutation.py: the one-operation variants of a reference program, step by step."""

from __future__ import annotations

import pytest
import torch

from autograder.core.mutation import GENERIC, Vocabulary, step_variants


def _program(x, w):
    b, n = x.shape
    scores = x @ w
    scaled = scores / n ** 0.5
    return scaled


def test_every_variant_changes_one_named_step_and_says_how():
    variants = step_variants(_program)
    assert {v.step for v in variants} == {"scores", "scaled"}  # `return scaled` has no operation to change
    by_change = {(v.step, v.operator): v for v in variants}
    floor = by_change[("scaled", "div_floordiv")]
    assert floor.before == "scaled = scores / n ** 0.5" and floor.after == "scaled = scores // n ** 0.5"
    x, w = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, 4, dtype=torch.float64)
    assert torch.equal(floor.function(x, w), (x @ w) // 4 ** 0.5)  # n = x.shape[1]
    square = torch.randn(3, 3, dtype=torch.float64)
    assert torch.allclose(by_change[("scores", "swap_operands")].function(square, w[:3, :3]),
                          w[:3, :3] @ square / 3 ** 0.5)
    # the unpacking of the shape assigns no single name: never varied
    assert not any(v.before.startswith("b, n") for v in variants)


def test_alternatives_are_varied_in_their_turn():
    plain = step_variants(_program)
    more = step_variants(_program, ("scaled = scores * n ** -0.5",))
    assert len(more) > len(plain)
    assert any(v.after == "scaled = scores * n" for v in more)  # the power dropped: only the alternative has it
    with pytest.raises(ValueError, match="no step 'missing'"):
        step_variants(_program, ("missing = 1",))


def _masked(x):
    filled = x.masked_fill(x > 0, "low").clamp(min=0, max=1).to(torch.float32)
    return filled


def test_the_vocabulary_says_which_calls_keywords_and_strings_vary():
    """Core knows generic tensor calls only; a chapter passes the calls of its subject."""
    plain = {v.operator for v in step_variants(_masked)}
    assert not {"drop_masked_fill", "low_high", "drop_max", "float32_float64"} & plain
    own = Vocabulary(droppable=GENERIC.droppable | {"masked_fill"}, keywords=("max",), strings=(("low", "high"),),
                     attributes=(("float32", "float64"),))
    changed = {v.operator: v.after for v in step_variants(_masked, (), own)}
    base = "filled = x.masked_fill(x > 0, 'low').clamp(min=0, max=1).to(torch.float32)"
    assert changed["drop_masked_fill"] == "filled = x.clamp(min=0, max=1).to(torch.float32)"
    assert changed["low_high"] == base.replace("'low'", "'high'")
    assert changed["drop_max"] == base.replace(", max=1", "")
    assert changed["float32_float64"] == base.replace("float32", "float64")
