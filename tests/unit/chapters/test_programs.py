"""The stages' step programs and the step diagnosis: the chapter's computation step by step, whose
one-operation variants name a mistake nobody catalogued, and only the step that was changed."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable

import pytest
import torch

from autograder.chapters.ch03_attention import programs as P
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks import s1_softmax, s2_scores, s3_self_attention, s4_causal, s6_mha
from autograder.chapters.ch03_attention.checks.diagnosis import WHOLE_SHAPES, _step_hint, diagnose_steps, error_variants, module_args
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.failures import NAMED, Hint, StudentCodeError
from autograder.core.mutation import _step_of, swap_steps
from autograder.core.strategies import tensor


def rewritten(function: Callable, alternative: str) -> Callable:
    """``function`` with one step written the ``alternative`` way."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    definition.decorator_list = []
    statement = ast.parse(alternative).body[0]
    index = next(i for i, s in enumerate(definition.body) if _step_of(s) == _step_of(statement))
    definition.body[index] = statement
    namespace = dict(function.__globals__)
    exec(compile(ast.unparse(tree), f"<{function.__name__} rewritten>", "exec"), namespace)
    return namespace[definition.name]



def diagnose_step_error(error, program, *args):
    return _step_hint(error_variants(error, program, *args), raised=True)


V1, V2 = s3_self_attention.V1.program, s3_self_attention.V2.program
CAUSAL, MHA = s4_causal.SPEC.program, s6_mha.SPEC.program
FUNCTIONS = (s1_softmax.PROGRAM, s2_scores.SCORES, s2_scores.WEIGHTS, s2_scores.CONTEXT)
SIZES = Sizes(batch=2, tokens=5, d_in=3, d_out=4, context_length=7, num_heads=2, seed=0)


def _state(d_in, d_out, bias=True, v1=False):
    names = ("W_query", "W_key", "W_value")
    if v1:
        return {n: tensor((d_in, d_out), i) for i, n in enumerate(names)}
    state = {f"{n}.weight": tensor((d_out, d_in), i) for i, n in enumerate(names)}
    if bias:
        state.update({f"{n}.bias": tensor((d_out,), 10 + i) for i, n in enumerate(names)})
    state.update({"out_proj.weight": tensor((d_out, d_out), 20), "out_proj.bias": tensor((d_out,), 21)})
    return state


def _d(state):
    return {k: R.d(v) for k, v in state.items()}


@pytest.mark.parametrize("program, reference, v1, batched", [
    (V1, lambda state, x: R.attention(state, x, causal=False, v1=True), True, False),
    (V2, lambda state, x: R.attention(state, x, causal=False), False, False),
    (CAUSAL, R.attention, False, True),
    (MHA, lambda state, x: R.multi_head(state, x, SIZES.num_heads), False, True),
])
def test_each_program_computes_what_the_oracle_does(program, reference, v1, batched):
    state = _state(SIZES.d_in, SIZES.d_out, v1=v1)
    x = tensor((SIZES.batch, SIZES.tokens, SIZES.d_in) if batched else (SIZES.tokens, SIZES.d_in), 5)
    out = program(_d(state), R.d(x), SIZES.context_length, SIZES.num_heads)
    assert torch.allclose(out, reference(state, x), atol=1e-10)
    if program.swapped:  # the two steps the other way round compute the same
        tree = ast.parse(textwrap.dedent(inspect.getsource(program.steps)))
        swap_steps(tree.body[0], *program.swapped)
        namespace = dict(program.steps.__globals__)
        exec(compile(ast.unparse(tree), "<swapped>", "exec"), namespace)
        again = namespace[tree.body[0].name](_d(state), R.d(x), SIZES.context_length, SIZES.num_heads)
        assert torch.allclose(again, out, atol=1e-10)
        assert "scaled = scores /" in ast.unparse(tree) and "weights = torch.softmax(masked" in ast.unparse(tree)
    for alternative in program.alternatives:  # every other way to write a step is right too
        again = rewritten(program.steps, alternative)(_d(state), R.d(x), SIZES.context_length, SIZES.num_heads)
        assert torch.allclose(again, out, atol=1e-10), alternative


def test_the_function_programs_compute_the_chapter():
    x, w = tensor((5, 3), 1).double(), torch.softmax(tensor((5, 5), 2).double(), -1)
    softmax, scores, weights, context = FUNCTIONS
    assert torch.allclose(softmax(x), torch.softmax(x, -1))
    assert torch.allclose(scores(x), x @ x.T)
    assert torch.allclose(weights(x), torch.softmax(x, -1))
    assert torch.allclose(context(w, x), w @ x)


def test_every_step_is_said_in_the_chapters_words():
    for program in (*FUNCTIONS, V1, V2, CAUSAL, MHA):
        for variant in program.variants():
            assert variant.step in P.STEPS, (program.steps.__name__, variant.step)


def _causal_args():
    state = _state(SIZES.d_in, SIZES.d_out)
    return module_args(state, tensor((SIZES.batch, SIZES.tokens, SIZES.d_in), 5), SIZES)


def _uncatalogued_causal(state, x, floor_scale=False, swapped_scale=False):
    """A causal attention with the scale written as a floor division (no catalogued mistake)."""
    q, k, v = (R.linear(state, n, R.d(x)) for n in ("W_query", "W_key", "W_value"))
    scores = q @ k.transpose(1, 2)
    n = scores.shape[-1]
    scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -torch.inf)
    d_k = k.shape[-1]
    scaled = scores // d_k ** 0.5 if floor_scale else (d_k ** 0.5 / scores if swapped_scale else scores / d_k ** 0.5)
    return torch.softmax(scaled, -1) @ v


def test_an_uncatalogued_change_is_named_by_its_step():
    state, x, *_ = _causal_args()
    hint = diagnose_steps(_uncatalogued_causal(state, x, floor_scale=True).float(), CAUSAL,
                          *_causal_args())
    assert hint.rank == NAMED and hint.mistake == "scale_div_floordiv"
    assert "1/sqrt(d_k)" in hint.text() and "//" in hint.text() and "the right step is" in hint.text(2)


def test_the_right_output_and_an_unexplained_one_are_never_named():
    state, x, *_ = _causal_args()
    assert diagnose_steps(_uncatalogued_causal(state, x).float(), CAUSAL, *_causal_args()) is None
    two_changes = _uncatalogued_causal(state, x, floor_scale=True) * 2  # two operations changed: no one step
    assert diagnose_steps(two_changes.float(), CAUSAL, *_causal_args()) is None


def _error(exc_type: str, message: str) -> StudentCodeError:
    return StudentCodeError(f"forward raised {exc_type}: {message}", Hint("hint", raised_at="cell 3, line 4, in forward"),
                            exc_type=exc_type, exc_message=message)


def test_an_error_names_a_step_only_when_every_variant_raising_it_changes_that_step():
    args = _causal_args()
    state, x = _d(args[0]), R.d(args[1])
    raising = {}
    for variant in CAUSAL.variants():
        try:
            variant.function(state, x, *args[2:])
        except Exception as exc:
            raising.setdefault((type(exc).__name__, str(exc)), set()).add(P.STEPS[variant.step][0])
    whole = {m: steps for m, steps in raising.items() if re.search(WHOLE_SHAPES, m[1])}
    one_step = next(m for m, steps in whole.items() if len(steps) == 1)
    several = next((m for m, steps in whole.items() if len(steps) > 1), None)
    broadcast = next(m for m in raising if "must match the size of tensor" in m[1])
    assert diagnose_step_error(_error(*broadcast), CAUSAL, *args) is None  # one axis each: too weak
    hint = diagnose_step_error(_error(*one_step), CAUSAL, *args)
    assert hint.rank == NAMED and hint.mistake.startswith(next(iter(raising[one_step])))
    if several is not None:
        assert diagnose_step_error(_error(*several), CAUSAL, *args) is None
    assert diagnose_step_error(_error("RuntimeError", "an error no variant raises"), CAUSAL, *args) is None


def test_the_variants_are_not_run_on_weights_far_beyond_the_graders_sizes():
    def weights(numbers):
        d_in = numbers // (3 * 4)
        scale = d_in ** -0.5  # scores of order 1, as the grader's own weights give: the softmax is not saturated
        return {n: tensor((d_in, 4), i).double() * scale for i, n in enumerate(("W_query", "W_key", "W_value"))}, \
            tensor((3, d_in), 9).double()

    floor = next(v for v in V1.variants() if v.operator == "div_floordiv")
    small, x = weights(12 * 50)
    assert diagnose_steps(floor.function(small, x, 3, 1).float(), V1, small, x, 3, 1)
    big, x = weights(1_200_000)  # the same mistake, on weights beyond the bound: not tried
    assert diagnose_steps(floor.function(big, x, 3, 1).float(), V1, big, x, 3, 1) is None
