"""The diagnosis of mistakes: a wrong output (or error) compared with what the known mistakes and
the one-operation variants of the stage's steps give."""

from __future__ import annotations

import re
import warnings
from contextlib import suppress
from dataclasses import replace

import torch

from autograder.chapters.ch03_attention import programs as P
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.spec import ModuleSpec, expect_weights_matter, load_grader_weights, named_weights, perturbed
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.chapters.ch03_attention.hints import shape_error_hint
from autograder.core.compare import BOOK, FLOAT32, close, expect_close, expect_shape
from autograder.core.failures import AMBIGUOUS, NAMED, CheckFailure, Hint, StudentCodeError, as_hint
from autograder.core.strategies import explaining, variation_seed


def named(hint: Hint | str, mistake: str) -> Hint:
    return replace(as_hint(hint), rank=NAMED, mistake=mistake)


def either(hints: list[Hint]) -> Hint:
    """Mistakes that give the same output here (at small sizes two can coincide): the first two said."""
    return Hint("", rank=AMBIGUOUS, alternatives=tuple(hints), mistake="|".join(h.mistake for h in hints[:2]))


def diagnose(actual: torch.Tensor, variants: dict[str, torch.Tensor], hints: dict[str, Hint | str], *,
             nan_everywhere_names: bool = True) -> Hint | None:
    """The hint of the first known mistake whose output matches the student's, NAMED when no mistake with
    another hint matches too. ``nan_everywhere_names=False`` where hypothesis shrinks the input toward
    zeros: there a mistake can be NaN everywhere because of the input alone (x / x.sum() at x = [0.0])."""
    all_nan = [name for name, output in variants.items() if bool(torch.isnan(output).all())]
    if nan_everywhere_names and isinstance(actual, torch.Tensor) and actual.is_floating_point() and \
            bool(torch.isnan(actual).all()) and len(all_nan) == 1 and variants[all_nan[0]].shape == actual.shape:
        # NaN everywhere names a mistake only when no other mistake (nor a degenerate input) gives it
        return named(hints[all_nan[0]], all_nan[0])
    first: dict[tuple, Hint] = {}  # each hint once, named by the first mistake that gives it
    for name, output in variants.items():
        if same_output(actual, output):
            hint = as_hint(hints[name])
            first.setdefault((hint.what, hint.fix), named(hint, name))
    if not first:
        return None
    return next(iter(first.values())) if len(first) == 1 else either(list(first.values()))


def same_output(actual, output: torch.Tensor) -> bool:
    """Whether ``actual`` is ``output``, NaN in the same places (an output NaN everywhere identifies no
    mistake: a degenerate input gives it too)."""
    return not bool(torch.isnan(output).all()) and close(actual, output.float(), FLOAT32)


# -- the steps' variants: mistakes nobody catalogued ----------------------------------------------

_VARIANTS_MAX_NUMBERS = 1_000_000  # sizes the student's module chose: far beyond the grader's, not tried


def _variants_run(program, args: tuple):
    """(variant, the tensor it gave or the exception it raised) for each variant of ``program``."""
    numbers = sum(t.numel() for a in args for t in (a.values() if isinstance(a, dict) else [a])
                  if isinstance(t, torch.Tensor))
    if numbers > _VARIANTS_MAX_NUMBERS:
        return
    for variant in program.variants():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                yield variant, variant.function(*args)
            except Exception as exc:  # a variant that raises: compared with what the student's code raised
                yield variant, exc


def _step_hint(matched: list, *, raised: bool = False) -> Hint | None:
    """The variants that gave the student's output (or error): NAMED for one step, else AMBIGUOUS."""
    if not matched:
        return None
    by_step = {}
    for variant in matched:
        by_step.setdefault(P.STEPS[variant.step][0], variant)
    kinds = {P.GROUPS.get(step_id, (step_id,))[0] for step_id in by_step}
    said = [(step_id, P.STEPS[variant.step][1], variant, "") for step_id, variant in list(by_step.items())[:2]]
    if len(by_step) > 1 and len(kinds) == 1 and said[0][0] in P.GROUPS:  # steps of one kind
        said = [(*P.GROUPS[said[0][0]], said[0][2], " (or the same change in another of them)")]
    what = "your code raises the error that" if raised else "your result is exactly what"
    hints = [Hint(f"one step differs from the chapter's computation, {words}: {what} `{P.as_written(variant.after)}`"
                  f"{also} gives", f"the right step is `{P.as_written(variant.before)}`", rank=NAMED,
                  mistake=f"{step_id}_{variant.operator}") for step_id, words, variant, also in said]
    return hints[0] if len(hints) == 1 else either(hints)


def diagnose_steps(actual, program, *args: torch.Tensor) -> Hint | None:
    """The step whose one-operation variant gives the student's output (see :func:`_step_hint`)."""
    if program is None or not explaining() or not isinstance(actual, torch.Tensor):
        return None
    args = _float64(args)
    try:
        if same_output(actual, program(*args)):
            return None  # the steps are right on these arguments: what differs is elsewhere (the weights)
    except Exception:
        return None  # the program cannot run on these weights (their shapes): the structure checks say why
    return _step_hint([v for v, out in _variants_run(program, args)
                       if isinstance(out, torch.Tensor) and same_output(actual, out)])


def _comparable(message: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f-\x9f?]", "?", message[:600])


# errors whose message gives both operands' whole shapes: a broadcast error names one axis of
# each, and a view's "invalid for input of size" ends any earlier wrong shape, too weak to name one
WHOLE_SHAPES = r"shapes cannot be multiplied|Expected size for first two dimensions|" \
               r"invalid combination of arguments|must be tuple of ints"


def error_variants(error: StudentCodeError, program, *args: torch.Tensor) -> list:
    """The variants that raise what the student's code raised (type and whole-shapes message), when they
    all change one step; [] when the right computation raises it too, or steps differ."""
    if program is None or not re.search(WHOLE_SHAPES, error.exc_message or "") or not explaining():
        return []
    args = _float64(args)
    raised = (error.exc_type, _comparable(error.exc_message))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program(*args)
    except Exception as exc:
        if (type(exc).__name__, _comparable(str(exc))) == raised:
            return []
    alike = [v for v, out in _variants_run(program, args)
             if isinstance(out, Exception) and (type(out).__name__, _comparable(str(out))) == raised]
    if len({P.GROUPS.get(P.STEPS[v.step][0], (P.STEPS[v.step][0],))[0] for v in alike}) != 1:
        return []
    return alike


def _rename(error: StudentCodeError, hint: Hint | None) -> None:
    """``hint`` in place of the error's, at the student's line the error was raised at."""
    if hint:
        error.hint = replace(hint, raised_at=error.hint.raised_at if error.hint else "")


def explain_module_error(error: StudentCodeError, spec: ModuleSpec, module, x: torch.Tensor, sizes: Sizes,
                         state: dict | None = None) -> None:
    """Name the step behind an error the student's module raised: the variants raising the same, else the
    mistake its outputs name at other sizes where it runs."""
    if spec.program is None or not explaining():
        return
    try:
        state = module.state() if state is None else state
    except StudentCodeError:
        return
    with named_weights(spec, state):
        suspects = error_variants(error, spec.program, *module_args(state, x, sizes))
    if suspects:
        _rename(error, _step_hint(suspects, raised=True))
        return
    for other, other_state, other_x, out in runs_at_other_sizes(spec, module.sub, sizes) or \
            runs_at_other_sizes(spec, module.sub, _distinct(spec)):
        with named_weights(spec, other_state):
            hint = diagnose_module(spec, out, other_state, other_x, other)
        if hint and hint.rank == NAMED:
            # in the words of the student's class: a class without heads is never told of heads
            said = other if spec.multi_head else replace(other, num_heads=1)
            _rename(error, replace(hint, what=f"{hint.what} (your class runs without this error when built with "
                                              f"{said}, and its output there shows this mistake)"))
            return


# sizes no two of which agree: near them a mistake that raises elsewhere may run; two mistakes that give one
# output elsewhere are told apart here
DISTINCT_SIZES = Sizes(batch=3, tokens=5, d_in=7, d_out=8, context_length=6, num_heads=2, seed=11)


def _distinct(spec: ModuleSpec) -> Sizes:
    return DISTINCT_SIZES if spec.multi_head else replace(DISTINCT_SIZES, num_heads=1)


def run_at(spec: ModuleSpec, sub, sizes: Sizes) -> tuple:
    """(weights, input, output or the CheckFailure raised) of the student's module at ``sizes`` on
    the grader's weights, once a stage: several failing checks ask the same."""
    def run() -> tuple:
        state = x = None
        try:
            module = spec.build(sub, sizes)
            state = load_grader_weights(module, sizes.seed)
            x = spec.input(sizes)
            return state, x, module(x)
        except CheckFailure as failure:
            return state, x, failure
    return sub.memoised(("run_at", spec.name, sizes), run)


def _confusable_sizes(sizes: Sizes) -> list[Sizes]:
    """Sizes at which two axes are equal (the tokens and the heads, d_in and d_out, ...): a mistake
    that raised at ``sizes`` may run there and show its output."""
    candidates = [replace(sizes, tokens=tokens, d_in=d_in, context_length=max(sizes.context_length, tokens))
                  for tokens, d_in in ((sizes.num_heads, sizes.d_in), (sizes.head_dim, sizes.d_in), (sizes.d_out, sizes.d_in),
                                       (sizes.tokens, sizes.d_out), (sizes.d_out, sizes.d_out))]
    return [candidate for candidate in dict.fromkeys(candidates) if candidate != sizes and candidate.tokens >= 1]


def runs_at_other_sizes(spec: ModuleSpec, sub, sizes: Sizes) -> list[tuple]:
    """(sizes, weights, input, output) where the student's module runs at confusable sizes and
    gives a wrong output."""
    seen = []
    for other in _confusable_sizes(sizes):
        state, x, out = run_at(spec, sub, other)
        with suppress(CheckFailure):  # a weight missing there: nothing to show
            if not isinstance(out, CheckFailure) and not close(out, spec.expected(state, x, other), FLOAT32):
                seen.append((other, state, x, out))
    return seen


def _float64(args: tuple) -> tuple:
    return tuple({k: R.d(v) for k, v in a.items()} if isinstance(a, dict) else
                 R.d(a) if isinstance(a, torch.Tensor) else a for a in args)


def module_args(state: dict, x: torch.Tensor, sizes: Sizes) -> tuple:
    """The arguments of a module's program: its weights, the input, the sizes it was built with."""
    return state, x, sizes.context_length, sizes.num_heads


def diagnose_module(spec: ModuleSpec, actual, state: dict, x: torch.Tensor, sizes: Sizes, sub=None) -> Hint | None:
    """The catalogued mistake that gives the student's output, else the step variant that does.
    Two that give it alike here are told apart on the student's ``sub`` at sizes that all differ."""
    hint = diagnose(actual, mistake_outputs(spec, state, x, sizes), spec.mistakes) or \
        diagnose_steps(actual, spec.program, *module_args(state, x, sizes))
    if sub is None or not hint or hint.rank != AMBIGUOUS:
        return hint
    there = _distinct(spec)
    there_state, there_x, there_out = run_at(spec, sub, there)
    if isinstance(there_out, CheckFailure):
        return hint
    told = None
    with suppress(CheckFailure), named_weights(spec, there_state):
        told = diagnose_module(spec, there_out, there_state, there_x, there)
    return told if told and told.rank == NAMED and any(told.same_advice(a) for a in hint.alternatives) else hint


def nan_hint(actual: torch.Tensor, expected: torch.Tensor) -> Hint | None:
    """Which tokens are NaN where ``expected`` is finite, and how a softmax makes NaN."""
    if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and actual.is_floating_point() \
            and bool((torch.isnan(actual) & torch.isfinite(expected)).any()):
        # the tokens (the second-to-last axis; a module's output has one) with a NaN somewhere
        tokens = torch.isnan(actual).reshape(-1, *actual.shape[-2:]).any(0).any(-1).nonzero().flatten().tolist()
        where = "every token" if len(tokens) == actual.shape[-2] else \
            f"token{'s' if len(tokens) > 1 else ''} {', '.join(map(str, tokens[:8]))}{' ...' if len(tokens) > 8 else ''}"
        return Hint(f"the output of {where} is NaN where it should be finite: a softmax gives NaN when every "
                    "score of a query is -inf (the token sees nothing) or when a score is +inf; print the "
                    "masked scores of those tokens", mistake="observed_nan")
    return None


def shape_named(spec: ModuleSpec, actual, state: dict, x: torch.Tensor, sizes: Sizes) -> Hint | None:
    """The known mistake whose output a wrongly shaped output is (returning the weights, ...)."""
    if not isinstance(actual, torch.Tensor) or tuple(actual.shape) == tuple(spec.out_shape(sizes)):
        return None
    with named_weights(spec, state):
        if close(actual, spec.reference(state, x, sizes, None), FLOAT32):  # no mistake in forward: in the layers
            return Hint("the output is right for the module's own layers, but they were built with other sizes than "
                        "its arguments ask for: compare each layer's shape with them", mistake="observed_layer_sizes")
        return diagnose_module(spec, actual, state, x, sizes)


def unexplained(advice: Hint | str) -> Hint:
    """A wrong output no known mistake gives: what is observed, then the check's advice (GENERIC)."""
    advice = as_hint(advice)
    if advice.mistake:
        return advice
    return replace(advice, what=f"the output differs from the right one and from every known mistake's: {advice.what}",
                   mistake="observed_wrong_values")


def mistake_outputs(spec: ModuleSpec, state: dict, x: torch.Tensor, sizes: Sizes) -> dict:
    """What each of the spec's known mistakes outputs here (only for the failure the student sees)."""
    found = {}
    for mistake in spec.mistakes if explaining() else ():
        with suppress(RuntimeError, ArithmeticError):  # a mistake that cannot even run at these sizes
            found[mistake] = spec.reference(state, x, sizes, mistake)
    return found


def function_mistake(actual, mistakes: R.FunctionMistakes, args: tuple, program, default: Hint | str) -> Hint | str:
    """The known mistake a function's output matches, or the step that gives it, else ``default``."""
    if not explaining():
        return default
    variants, hints = R.function_variants(mistakes, *args)
    return diagnose(actual, variants, hints, nan_everywhere_names=False) or diagnose_steps(actual, program, *args) or \
        default


def expect_function(actual: torch.Tensor, expected: torch.Tensor, what: str, mistakes: R.FunctionMistakes,
                    args: tuple, *, default_hint: Hint | str, tol=FLOAT32, program=None) -> None:
    """``actual`` equals ``expected``; else :func:`function_mistake` says why."""
    hint = default_hint if close(actual, expected, tol) else function_mistake(actual, mistakes, args, program,
                                                                              default_hint)
    expect_close(actual, expected, what, hint=hint, tol=tol)


def expect_reference(spec: ModuleSpec, actual: torch.Tensor, state: dict, x: torch.Tensor, sizes: Sizes,
                     what: str, extra_hint: Hint | str = "", *, sub=None) -> None:
    expected = spec.expected(state, x, sizes)
    expect_shape(actual, expected.shape, what, shape_named(spec, actual, state, x, sizes) or spec.shape_hint)
    if close(actual, expected, FLOAT32):
        return
    hint = diagnose_module(spec, actual, state, x, sizes, sub) or \
        nan_hint(actual, expected) or unexplained(extra_hint or (
            "compare each step with the book: queries/keys/values, scores, scale, mask, softmax over the keys, "
            "weights @ values"))
    expect_close(actual, expected, what, hint=hint)


def expect_book(spec: ModuleSpec, sub, expected: torch.Tensor, *, weights_hint: Hint | str,
                default_hint: Hint | str) -> None:
    """The book's printed output for its fixed seed; when it differs, the right attention on the
    module's own weights means the weights are not the book's, else a known mistake may say why."""
    module, x, sizes = spec.book_module(sub), spec.book_input, spec.book.sizes
    try:
        out = module(x)
    except StudentCodeError as failure:
        failure.hint = shape_error_hint(failure.message, sizes, failure.hint)
        explain_module_error(failure, spec, module, x, sizes)
        raise
    what = f"{module.what}({'batch' if spec.batched else 'inputs'})"
    expect_shape(out, spec.out_shape(sizes), what, spec.shape_hint or default_hint)
    if close(out, expected, BOOK):
        expect_beyond_book(spec, module, x, sizes)
        return
    state = module.state()
    hint = weights_hint if close(out, spec.expected(state, x, sizes), FLOAT32) else \
        diagnose_module(spec, out, state, x, sizes, module.sub) or nan_hint(out, expected) or unexplained(default_hint)
    expect_close(out, expected, what, tol=BOOK, hint=hint)


def expect_beyond_book(spec: ModuleSpec, module, x: torch.Tensor, sizes: Sizes) -> None:
    """The same code must be right on the book's input perturbed, with the grader's weights."""
    seed = variation_seed()
    x = perturbed(x, seed)
    state = load_grader_weights(module, 1000 + seed)
    try:
        out = module(x)
    except StudentCodeError as failure:
        explain_module_error(failure, spec, module, x, sizes, state)
        raise
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)", spec.shape_hint)
    expect_weights_matter(module, x, out, state, 1000 + seed, restore=False)
    expected = spec.expected(state, x, sizes)
    if close(out, expected, FLOAT32):
        return
    hint = diagnose_module(spec, out, state, x, sizes, module.sub) or nan_hint(out, expected) or \
        ("the book's printed output is reproduced, but the same code is wrong on other inputs and weights: "
         "compute the attention itself (no printed values, no special cases for the book's example)")
    expect_close(out, expected, f"{module.what} on the book's inputs changed slightly, with other weights",
                 hint=hint)
