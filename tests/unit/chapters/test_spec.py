"""checks/spec.py: the module contract, the grader's weights, and the output depending on them
(with properties.judged, which builds on them)."""

from __future__ import annotations

import math

import pytest
import torch

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks import s3_self_attention, s4_causal
from autograder.chapters.ch03_attention.checks.properties import STRUCTURE_SIZES, judged, works_somewhere
from autograder.chapters.ch03_attention.checks.spec import (
    WEIGHTS_IGNORED_HINT,
    grader_weights,
    load_grader_weights,
    load_weights,
    named_weights,
    perturbed,
    require,
)
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.failures import NAMED, CheckFailure, as_hint
from autograder.core.strategies import tensor

from .conftest import IgnoresWeights, submission, variant

SPEC = s4_causal.SPEC
SIZES = Sizes(batch=2, tokens=4, d_in=3, d_out=5, context_length=6, num_heads=1, seed=3)


def test_require_gives_the_students_function_or_class(right):
    assert require(right, "CausalAttention", "class") == "CausalAttention"
    sub = submission(softmax_naive=lambda x: x)
    assert callable(require(sub, "softmax_naive", "function"))


def test_require_says_a_missing_name():
    with pytest.raises(CheckFailure, match="`CausalAttention` is not defined") as failure:
        require(submission(), "CausalAttention", "class")
    assert "in the Stage 4 cell" in failure.value.hint.text()


def test_require_says_a_function_where_a_class_is_asked():
    with pytest.raises(CheckFailure, match="is a function, expected a class"):
        require(submission(CausalAttention=lambda *a: None), "CausalAttention", "class")


def test_spec_builds_inputs_and_shapes():
    assert SPEC.input(SIZES).shape == (2, 4, 3) and SPEC.out_shape(SIZES) == (2, 4, 5)
    assert s3_self_attention.V2.input(SIZES).shape == (4, 3)
    module = SPEC.build(submission(CausalAttention=variant(None)), SIZES, dropout=0.5)
    assert module.info["modules"]["dropout"]["p"] == 0.5


def test_grader_weights_cover_every_parameter_within_the_linear_bound(right):
    module = SPEC.build(right, SIZES)
    drawn = grader_weights(module, seed=7)
    assert {n: list(t.shape) for n, t in drawn.items()} == module.info["params"]
    for t in drawn.values():
        assert t.abs().max() <= 1 / math.sqrt(3) and t.abs().max() > 0.2  # fan_in = d_in = 3
    assert all(torch.equal(drawn[n], t) for n, t in grader_weights(module, seed=7).items())  # deterministic
    other = grader_weights(module, seed=8)
    assert not any(torch.equal(drawn[n], other[n]) for n in drawn)
    assert not torch.equal(drawn["W_query.weight"], drawn["W_key.weight"])  # each name its own draw


def test_grader_weights_of_v1_read_fan_in_from_the_first_axis():
    class Module:
        info = {"params": {"W_query": [20, 2]}}

    drawn = grader_weights(Module(), seed=0)["W_query"]
    assert drawn.abs().max() <= 1 / math.sqrt(20) and drawn.abs().max() > 0.1


def test_grader_weights_go_only_into_the_contracts_layers_unless_none_is_named_so():
    class Module:
        info = {"params": {"W_query.weight": [2, 3], "heads.0.W_key.weight": [2, 3], "mask": [4, 4]}}

    assert sorted(grader_weights(Module(), seed=0)) == ["W_query.weight", "heads.0.W_key.weight"]
    Module.info = {"params": {"query.weight": [2, 3]}}  # misnamed: the reference then names the missing one
    assert sorted(grader_weights(Module(), seed=0)) == ["query.weight"]


def test_load_grader_weights_loads_them(right):
    module = SPEC.build(right, SIZES)
    drawn = load_grader_weights(module, seed=4)
    state = module.state()
    assert all(torch.equal(state[n], t) for n, t in drawn.items())


def test_load_weights_says_a_missing_contract_name(right):
    module = SPEC.build(right, SIZES)
    state = module.state()
    load_weights(SPEC, module, {"W_key.weight": torch.zeros_like(state["W_key.weight"])})
    assert not module.state()["W_key.weight"].any()
    with pytest.raises(CheckFailure, match="CausalAttention has no weight named 'W_keys.weight'") as failure:
        load_weights(SPEC, module, {"W_keys.weight": torch.zeros(5, 3)})
    assert failure.value.hint == as_hint(SPEC.structure_hint)


def test_named_weights_turns_a_missing_key_into_a_structure_failure():
    spec = s4_causal.SPEC
    with pytest.raises(CheckFailure, match="no weight named 'W_value.weight'"), named_weights(spec, {"W_query.weight"}):
        R.attention({"W_query.weight": torch.zeros(2, 2), "W_key.weight": torch.zeros(2, 2)},
                           torch.zeros(1, 2, 2))
    with named_weights(spec):
        pass  # nothing missing, nothing raised


def test_judged_gives_the_module_on_the_grader_weights(right):
    module, state, x, out = judged(SPEC, right, SIZES)
    assert torch.equal(state["W_query.weight"], grader_weights(module, SIZES.seed)["W_query.weight"])
    torch.testing.assert_close(out, R.attention(state, x).float(), rtol=1e-5, atol=1e-6)


def test_judged_fails_a_module_whose_output_ignores_its_weights():
    with pytest.raises(CheckFailure, match="does not depend on the module's weights") as failure:
        judged(SPEC, submission(CausalAttention=IgnoresWeights), SIZES)
    assert failure.value.hint.text() == WEIGHTS_IGNORED_HINT and failure.value.hint.rank == NAMED


def test_works_somewhere(right):
    assert works_somewhere(SPEC, right)
    assert not works_somewhere(SPEC, submission(CausalAttention=IgnoresWeights))
    assert STRUCTURE_SIZES.tokens <= STRUCTURE_SIZES.context_length


def test_perturbed_moves_every_entry_by_at_most_a_half():
    x = tensor((2, 6, 3), 0)
    moved = perturbed(x, seed=0)
    assert torch.equal(moved, perturbed(x, seed=0)) and not torch.equal(moved, perturbed(x, seed=1))
    assert 0 < (moved - x).abs().max() <= 0.5 and (moved != x).all()
