"""checks/diagnosis.py: a wrong output named by the known mistake it matches, and only then."""

from __future__ import annotations

import pytest
import torch

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks import s4_causal
from autograder.chapters.ch03_attention.checks.diagnosis import (
    diagnose,
    expect_function,
    expect_reference,
    mistake_outputs,
    nan_hint,
    run_at,
    runs_at_other_sizes,
)
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.failures import AMBIGUOUS, GENERIC, NAMED, CheckFailure, Hint, StudentCodeError, as_hint
from autograder.core.strategies import tensor

from .conftest import submission, variant

A, B, C = (tensor((3, 4), seed) for seed in (1, 2, 3))
HINTS = {"a": "hint a", "b": "hint b", "a_again": "hint a"}


def test_diagnose_names_the_one_mistake_that_matches():
    hint = diagnose(B.clone(), {"a": A, "b": B}, HINTS)
    assert hint == Hint("hint b", mistake="b", rank=NAMED)


def test_diagnose_is_silent_when_no_mistake_matches():
    assert diagnose(C, {"a": A, "b": B}, HINTS) is None


def test_diagnose_says_both_when_two_mistakes_match_equally():
    hint = diagnose(A, {"a": A, "b": A.clone()}, HINTS)
    assert hint.rank == AMBIGUOUS and [a.what for a in hint.alternatives] == ["hint a", "hint b"]
    assert hint.text() == "hint a; or, as likely here: hint b" and hint.mistake == "a|b"


def test_two_mistakes_with_one_hint_are_one_diagnosis():
    hint = diagnose(A, {"a": A, "a_again": A.clone(), "b": B}, HINTS)
    assert hint == Hint("hint a", mistake="a", rank=NAMED)


def test_diagnose_matches_nan_in_the_same_places():
    with_nan = A.clone()
    with_nan[0, 0] = float("nan")
    actual = A.clone()
    actual[0, 0] = float("nan")
    assert diagnose(actual, {"a": with_nan, "b": B}, HINTS).text() == "hint a"
    # the same NaN but other values elsewhere: NaN alone is no evidence of the mistake
    other_values = C.clone()
    other_values[0, 0] = float("nan")
    assert diagnose(other_values, {"a": with_nan, "b": B}, HINTS) is None
    elsewhere = C.clone()
    elsewhere[1, 1] = float("nan")
    assert diagnose(elsewhere, {"a": with_nan, "b": B}, HINTS) is None


def test_an_output_nan_everywhere_names_a_mistake_only_when_no_other_gives_it():
    nan = torch.full((3, 4), float("nan"))
    assert diagnose(nan.clone(), {"a": nan, "b": nan.clone()}, HINTS) is None  # a degenerate input
    hint = diagnose(nan.clone(), {"a": nan, "b": B}, HINTS)
    assert hint.text() == "hint a" and hint.mistake == "a"


def test_nan_hint_only_where_the_expected_output_is_finite():
    broken = A.clone()
    broken[2, 1] = float("nan")
    hint = nan_hint(broken, A)
    # an observation (which token, how a softmax makes NaN), never a mistake it did not match
    assert "token 2" in hint.text() and hint.rank == GENERIC and hint.mistake == "observed_nan"
    assert nan_hint(A, A) is None
    assert nan_hint(broken, broken) is None  # the expected output has that NaN too
    assert nan_hint(broken[:2], A) is None  # another shape: a shape failure, said elsewhere


def test_expect_function_passes_the_right_output():
    x = tensor((3, 5), 4)
    expect_function(torch.softmax(x, -1), torch.softmax(x, -1), "softmax_naive(x)", R.softmax_mistakes(x), (x,),
                    default_hint="generic")


def test_expect_function_names_the_mistake_the_output_matches():
    x = tensor((3, 5), 4)
    whole = x.exp() / x.exp().sum()
    with pytest.raises(CheckFailure) as failure:
        expect_function(whole, torch.softmax(x, -1), "softmax_naive(x)", R.softmax_mistakes(x), (x,),
                        default_hint="generic")
    assert failure.value.hint.same_advice(R.SOFTMAX_MISTAKES["whole_tensor"][1])
    assert failure.value.hint.mistake == "whole_tensor"


def test_expect_function_gives_the_default_hint_for_an_unknown_mistake():
    x = tensor((3, 5), 4)
    with pytest.raises(CheckFailure) as failure:
        expect_function(torch.softmax(x, -1) + 0.1, torch.softmax(x, -1), "softmax_naive(x)", R.softmax_mistakes(x),
                        (x,), default_hint="generic")
    assert failure.value.hint == Hint("generic")


SIZES = Sizes(batch=2, tokens=5, d_in=3, d_out=4, context_length=6, num_heads=1, seed=9)
STATE = {name: tensor(shape, seed) for seed, (name, shape) in enumerate(
    (("W_query.weight", (4, 3)), ("W_key.weight", (4, 3)), ("W_value.weight", (4, 3))))}
X = tensor((2, 5, 3), 11)


def test_mistake_outputs_are_the_references_mistakes():
    found = mistake_outputs(s4_causal.SPEC, STATE, X, SIZES)
    assert len(found) > 10 and set(found) <= set(s4_causal.SPEC.mistakes)
    for name, output in found.items():
        torch.testing.assert_close(output, R.attention(STATE, X, name), rtol=0, atol=0, equal_nan=True)
    for name in set(s4_causal.SPEC.mistakes) - set(found):  # only those that cannot run at these sizes
        with pytest.raises(RuntimeError):
            R.attention(STATE, X, name)


def test_expect_reference_passes_the_right_output():
    expect_reference(s4_causal.SPEC, R.attention(STATE, X).float(), STATE, X, SIZES, "out")


@pytest.mark.parametrize("mistake", ["no_mask", "mask_hides_diagonal", "softmax_wrong_dim", "no_scale"])
def test_expect_reference_names_the_mistake(mistake):
    wrong = R.attention(STATE, X, mistake).float()
    with pytest.raises(CheckFailure) as failure:
        expect_reference(s4_causal.SPEC, wrong, STATE, X, SIZES, "out")
    assert failure.value.hint.same_advice(as_hint(R.ATTENTION_MISTAKES[mistake])) and failure.value.hint.mistake == mistake


def test_expect_reference_falls_back_on_the_generic_hint():
    with pytest.raises(CheckFailure) as failure:
        expect_reference(s4_causal.SPEC, R.attention(STATE, X).float() * 1.5, STATE, X, SIZES, "out",
                         extra_hint="extra")
    hint = failure.value.hint
    assert hint.text().endswith("extra") and hint.rank == GENERIC and hint.mistake == "observed_wrong_values"


def test_expect_reference_says_a_missing_contract_weight():
    state = {k: v for k, v in STATE.items() if k != "W_key.weight"}
    with pytest.raises(CheckFailure, match="CausalAttention has no weight named 'W_key.weight'"):
        expect_reference(s4_causal.SPEC, R.attention(STATE, X).float(), state, X, SIZES, "out")


def test_nan_everywhere_names_no_mistake_on_a_drawn_example():
    """At x = [0.0] the no-exp mistake (x / x.sum()) is NaN everywhere because of the input
    alone: a submission NaN everywhere for its own reasons must not be told exp is missing."""
    x = torch.tensor([0.0], dtype=torch.float64)
    variants = {"no_exp": x / x.sum(), "whole_tensor": x.exp() / x.exp().sum()}
    hints = {"no_exp": "exp is missing", "whole_tensor": "the whole tensor sums to 1"}
    nan = torch.tensor([float("nan")])
    assert diagnose(nan, variants, hints, nan_everywhere_names=False) is None
    assert diagnose(nan, variants, hints).text() == "exp is missing"  # seeded module inputs: it names


def _counting_builds(sub) -> list:
    builds = []
    ask = sub._ask
    sub._ask = lambda req, what: (builds.append(what) if req["op"] == "build" else None) or ask(req, what)
    return builds


class RaisesInForward(variant(None)):
    def forward(self, x):
        raise RuntimeError("no forward here")


def test_run_at_runs_the_students_module_once_a_stage_at_given_sizes():
    """The diagnoses of a stage's failing checks ask for the same sizes: the module is built
    and run once, and the same answer (an output, or the error it raised) serves them all."""
    sub = submission(CausalAttention=variant("no_mask"))
    builds = _counting_builds(sub)
    first = runs_at_other_sizes(s4_causal.SPEC, sub, SIZES)
    built = len(builds)
    assert first and built >= len(first)
    again = runs_at_other_sizes(s4_causal.SPEC, sub, SIZES)
    assert len(builds) == built
    assert [(o, x, out) for o, _, x, out in again] == [(o, x, out) for o, _, x, out in first]
    state, x, out = run_at(s4_causal.SPEC, sub, SIZES)
    torch.testing.assert_close(out, R.attention(state, x, "no_mask").float())

    raising = submission(CausalAttention=RaisesInForward)
    builds = _counting_builds(raising)
    state, x, error = run_at(s4_causal.SPEC, raising, SIZES)
    assert isinstance(error, StudentCodeError) and "no forward here" in error.message
    assert run_at(s4_causal.SPEC, raising, SIZES)[2] is error and len(builds) == 1
