"""What every right attention module does, checked on the student's module with the grader's
weights (:func:`judged`), each failure naming the known mistake when one explains it."""

from __future__ import annotations

import math
from dataclasses import replace

import torch
from hypothesis import strategies as st

from autograder.chapters.ch03_attention.checks.diagnosis import diagnose_module, expect_reference, explain_module_error, shape_named
from autograder.chapters.ch03_attention.checks.spec import (
    ModuleSpec,
    broken,
    expect_weights_matter,
    load_grader_weights,
    load_weights,
    named_weights,
    require,
)
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.compare import EXACT, FLOAT32, close, expect_close, expect_shape, fmt
from autograder.core.failures import NAMED, CheckFailure, Hint, StudentCodeError
from autograder.core.strategies import run_property, tensor

# the token after which causality changes the input (taken modulo the number of tokens)
positions = st.integers(0, 64)


# -- the module on the grader's weights -------------------------------------------------------

STRUCTURE_SIZES = Sizes(batch=2, tokens=3, d_in=5, d_out=4, context_length=4, num_heads=2, seed=5)


def judged(spec: ModuleSpec, sub, sizes: Sizes, x: torch.Tensor | None = None):
    """The student's module for ``sizes`` with the grader's weights loaded, and its output on
    ``x``, which must have the right shape and depend on those weights: (module, state, x, out)."""
    module = spec.build(sub, sizes)
    x = spec.input(sizes) if x is None else x
    state = load_grader_weights(module, sizes.seed)
    try:
        out = module(x)
    except StudentCodeError as failure:
        explain_module_error(failure, spec, module, x, sizes, state)
        raise
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)", shape_named(spec, out, state, x, sizes) or
                 spec.shape_hint)
    try:
        expect_weights_matter(module, x, out, state, sizes.seed)
    except CheckFailure:
        if isinstance(out, torch.Tensor) and out.is_floating_point() and bool(torch.isnan(out).any()):
            # NaN is the same whatever the weights: say what it is, not that the weights are ignored
            module.load(state)
            expect_reference(spec, out, state, x, sizes, f"{module.what}(x)")
        raise
    return module, state, x, out


def matches_reference(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """The module equals the reference computation on the grader's weights."""
    module, state, x, out = judged(spec, sub, sizes)
    expect_reference(spec, out, state, x, sizes, f"{module.what}(x)", sub=sub)


def expect_uses_weights(spec: ModuleSpec, sub, sizes: Sizes = STRUCTURE_SIZES) -> None:
    """Structure earns points only when forward uses it (no zeros or looked-up outputs)."""
    judged(spec, sub, sizes)


def works_somewhere(spec: ModuleSpec, sub) -> bool:
    """Whether the student's module gives a weight-dependent output at some structure sizes."""
    for sizes in (STRUCTURE_SIZES, replace(STRUCTURE_SIZES, tokens=4),
                  replace(STRUCTURE_SIZES, tokens=4, d_out=2, num_heads=1)):
        try:
            expect_uses_weights(spec, sub, sizes)
            return True
        except CheckFailure:
            continue
    return False


def book_unless_working(spec: ModuleSpec, sub, probes: tuple[Sizes, ...], book) -> None:
    """Where the student's ``spec`` class is broken at ``probes`` (its own stage grades it), a later
    stage builds on the book's: ``book(sub, why)``."""
    if spec.name not in sub.substitute:
        why = sub.memoised(("broken", spec.name), lambda: next(filter(None, (broken(spec, sub, s) for s in probes)), ""))
        if why:
            book(sub, why)


def excusing_errors(spec: ModuleSpec, sub, part, x: torch.Tensor, judge, book, where: str):
    """``judge()``; an error the student's ``spec`` class (``part()``) raises alike on ``x``, though it works
    elsewhere, is its own stage's: ``book(sub, why)`` and judge again."""
    try:
        return judge()
    except StudentCodeError as error:
        if spec.name in sub.substitute:
            raise
        own = part()
        try:
            own(x)
        except StudentCodeError as same:
            if same.exc_type == error.exc_type and works_somewhere(spec, sub):
                book(sub, f"yours raises {error.exc_type or 'an error'} {where}")
                return judge()
        raise


# -- the properties ----------------------------------------------------------------------------

def on_drawn_sizes(spec: ModuleSpec, sub, prop, *strategies, examples: int, shown: bool = True) -> None:
    """``prop(spec, sub, sizes, ...)`` on drawn examples of the student's ``spec`` class (the input named
    beside a failure when ``shown``)."""
    require(sub, spec.name, "class")
    run_property(lambda *drawn: prop(spec, sub, *drawn), *strategies, examples=examples,
                 show_input=spec.input if shown else None)


def _weights_for_constant_values(spec: ModuleSpec, state: dict, sizes: Sizes) -> dict:
    """Weights that make every value vector all ones (on inputs whose first feature is 1)."""
    new = {}
    for prefix in spec.value_heads(sizes):
        name = prefix if spec.v1_style else f"{prefix}.weight"
        new[name] = torch.zeros_like(state[name])
        if spec.v1_style:  # x @ W: the first feature's row
            new[name][0, :] = 1.0
        else:
            new[name][:, 0] = 1.0
        if f"{prefix}.bias" in state:
            new[f"{prefix}.bias"] = torch.zeros_like(state[f"{prefix}.bias"])
    if spec.identity_out_proj:
        new["out_proj.weight"] = torch.eye(state["out_proj.weight"].shape[0])
        new["out_proj.bias"] = torch.zeros_like(state["out_proj.bias"])
    return new


def row_sums(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Attention weights of each token form a convex combination (they sum to 1)."""
    x = spec.input(sizes)
    x[..., 0] = 1.0
    module, state, _, plain_out = judged(spec, sub, sizes, x)
    with named_weights(spec, state):
        constant = _weights_for_constant_values(spec, state, sizes)
    load_weights(spec, module, constant)
    out = module(x)
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)", spec.shape_hint)
    if close(out, torch.ones_like(out), FLOAT32):
        return
    row = out.double().reshape(-1, out.shape[-1])  # each coordinate is the sum of one row of weights
    # named on the grader's ordinary weights: with every value vector equal to ones many mistakes coincide
    known = diagnose_module(spec, plain_out, state, x, sizes)
    if torch.isnan(row).any():
        token = int(torch.isnan(out).nonzero()[0][-2])
        raise CheckFailure(
            f"with every value vector equal to ones, the output of token {token} is NaN",
            known or Hint(f"the attention weights of token {token} are NaN: a softmax gives NaN when every "
                          "score of a query is -inf (the token sees nothing) or a score is +inf; print "
                          "that token's masked scores", mistake="observed_nan"))
    bad = (row - 1).abs().max(dim=-1).values.argmax()
    value = row[bad][(row[bad] - 1).abs().argmax()].item()
    if known:
        hint = known
    elif torch.allclose(row, torch.full_like(row, 1 / math.sqrt(sizes.head_dim)), rtol=1e-4, atol=1e-5):
        # every row sums to exactly 1/sqrt(d_k): the evidence of the scale applied after the softmax
        hint = Hint("the weights are scaled after the softmax: divide the scores by sqrt(d_k) before "
                    "the softmax, so the weights still sum to 1", rank=NAMED, mistake="scale_after_softmax")
    else:
        # no known mistake gives this output: say what is observed, not a guess at its cause
        hint = Hint(f"the attention weights of a token sum to {value:.4g}, not 1: the softmax must run over "
                    "the keys (the last axis) and nothing may change the weights after it but dropout",
                    mistake="observed_rows_not_summing_to_1")
    raise CheckFailure(
        f"with every value vector equal to ones the output must be all ones (the attention weights "
        f"of each token sum to 1), but a row of weights sums to {value:.4g}", hint)


def causality(spec: ModuleSpec, sub, sizes: Sizes, position: int) -> None:
    """Changing tokens after ``position`` never changes the outputs up to ``position``."""
    t = position % (sizes.tokens - 1)
    module, state, x, before = judged(spec, sub, sizes)
    changed = x.clone()
    changed[:, t + 1:] = tensor(changed[:, t + 1:].shape, sizes.seed + 7, -3, 3)
    after = module(changed)
    if not close(before[:, :t + 1], after[:, :t + 1], EXACT):
        differs = ~torch.isclose(before[:, :t + 1].double(), after[:, :t + 1].double(), rtol=EXACT.rtol,
                                 atol=EXACT.atol, equal_nan=True)
        token = int(differs.any(0).any(-1).nonzero()[0])
        known = diagnose_module(spec, before, state, x, sizes)
        raise CheckFailure(
            f"output at token {token} changed when only tokens {t + 1}..{sizes.tokens - 1} "
            "changed", known or Hint(f"the output of token {token} depends on later tokens (only tokens {t + 1}.. changed): every "
                                     "score above the diagonal must be -inf before the softmax, and no other step may move values "
                                     "between tokens", "torch.triu(..., diagonal=1), sliced to [:num_tokens, :num_tokens]",
                                     mistake="observed_future_dependence"))


def batch_independence(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    module, _, x, whole = judged(spec, sub, sizes)
    if not close(whole[:1], module(x[:1]), FLOAT32):
        raise CheckFailure("the output of the first sequence depends on the other sequences "
                           "in the batch", Hint("keep the batch axis apart: transpose only the last two axes of the "
                                                "keys, never mix sequences", "keys.transpose(1, 2) or -2, -1"))


def permutation_equivariance(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Without a mask, permuting the tokens permutes the outputs the same way."""
    module, _, x, out = judged(spec, sub, sizes)
    perm = torch.randperm(sizes.tokens, generator=torch.Generator().manual_seed(sizes.seed))
    if not close(module(x[perm]), out[perm], FLOAT32):
        raise CheckFailure("permuting the input tokens did not permute the output the same way",
                           "self-attention treats tokens as a set: each output row must depend only on "
                           "its own query and all keys/values")


def gradients(spec: ModuleSpec, sub, sizes: Sizes, names: list[str]) -> None:
    """Gradients reach the named weights and equal the reference's."""
    module = spec.build(sub, sizes)
    x = spec.input(sizes)
    plain_state = load_grader_weights(module, sizes.seed)
    upstream = tensor(spec.out_shape(sizes), sizes.seed + 3)
    out, grads = module.grads(x, upstream)
    expect_reference(spec, out, plain_state, x, sizes, f"{module.what}(x)")
    state = {k: v.detach().double().requires_grad_(True) for k, v in plain_state.items()}
    ref = spec.expected(state, x, sizes)
    (ref * upstream.double()).sum().backward()
    for name in names:
        if name not in grads:
            raise CheckFailure(f"no gradient reached {name}",
                               "part of forward is cut off from autograd: no torch.no_grad(), "
                               ".detach(), .data or new tensors built from .tolist() inside forward")
        expect_close(grads[name], state[name].grad, f"the gradient of {name}",
                     hint="the forward pass computes something else than attention on these weights")


def dropout_behaviour(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Eval mode ignores dropout; training mode drops whole attention weights, rescaled: token 0 attends
    only to itself, so its output is 0 or its eval value / (1 - p); how it breaks that names the mistake."""
    p, passes = 0.5, 64
    plain = spec.build(sub, sizes, dropout=0.0)
    dropped = spec.build(sub, sizes, dropout=p)
    state = load_grader_weights(plain, sizes.seed)
    if spec.identity_out_proj:
        with named_weights(spec, state):
            state = {**state, "out_proj.weight": torch.eye(state["out_proj.weight"].shape[0]),
                     "out_proj.bias": torch.zeros_like(state["out_proj.bias"])}
        load_weights(spec, plain, {k: state[k] for k in ("out_proj.weight", "out_proj.bias")})
    load_weights(spec, dropped, state)
    x = spec.input(sizes)
    reference = plain(x)
    expect_reference(spec, reference, state, x, sizes, f"{plain.what}(x)")
    expect_close(dropped(x), reference, f"with dropout={p} in eval mode, the output",
                 hint="in eval mode (module.eval()) dropout must do nothing: use nn.Dropout, or pass "
                      "training=self.training to F.dropout")
    samples = dropped.samples(x, passes, seed=sizes.seed).double()
    expect_shape(samples[0], reference.shape, f"{dropped.what} in training mode")
    if close(samples.std(0).sum(), torch.tensor(0.0), EXACT):
        raise CheckFailure(f"dropout={p} in training mode never changed the output",
                           Hint("apply self.dropout to the attention weights in forward (or pass its rate to "
                                "scaled_dot_product_attention in training mode)",
                                "dropout_p=self.dropout.p if self.training else 0.0"))
    eval_out = reference.double()
    block = samples.shape[-1] // sizes.num_heads

    def tolerance(value):
        return 1e-4 + 1e-4 * value.abs().amax(-1)

    seen = {"kept": False, "dropped": False}
    for h in range(sizes.num_heads):
        cols = slice(h * block, (h + 1) * block)
        part, eval_part = samples[:, :, 0, cols], eval_out[:, 0, cols]  # (passes, batch, block)
        kept = (part - eval_part / (1 - p)).abs().amax(-1) <= tolerance(eval_part)
        unscaled = (part - eval_part).abs().amax(-1) <= tolerance(eval_part)
        zero = part.abs().amax(-1) <= 1e-6
        if not bool((kept | zero).all()):
            if bool(unscaled.all()):
                hint = ("dropout is applied before the softmax, to the scores: apply it to the attention "
                        "weights after the softmax")
            elif bool((unscaled | zero).all()):
                hint = ("the kept weights are not rescaled by 1/(1-p): use nn.Dropout, which rescales "
                        "them so the expected output stays the same")
            elif bool(((part.abs() <= 1e-6).any(-1) & ~zero).any()):
                hint = ("dropout zeroes single coordinates of the output: apply it to the attention weights "
                        "(after the softmax), not to the values or the output")
            else:
                hint = ("apply dropout to the attention weights after the softmax (not to the scores, the "
                        "values or the output), and use nn.Dropout, which rescales by 1/(1-p)")
            raise CheckFailure(
                f"in training mode the first token's output (which attends only to itself) must be either "
                f"0 or its eval value x {1 / (1 - p):g}; got {fmt(part[:, 0])} with eval value "
                f"{fmt(eval_part[0])}", hint)
        seen["kept"] |= bool(kept.any())
        seen["dropped"] |= bool(zero.any())
    if not (seen["kept"] and seen["dropped"]):
        raise CheckFailure(f"dropout={p}: the first token's attention weight was never "
                           f"{'dropped' if seen['kept'] else 'kept'} in {passes} training passes",
                           "apply dropout to the attention weights after the softmax")
    # dropout on the output gives the last token only 0 or its eval value x 2; on its weights, many outputs
    last, eval_last = samples[:, :, -1, :], eval_out[:, -1, :]
    zero_or_scaled = ((last - eval_last / (1 - p)).abs() <= tolerance(eval_last).unsqueeze(-1)) | (last.abs() <= 1e-6)
    if sizes.tokens > 1 and bool(zero_or_scaled.all()) and bool((eval_last.abs() > 1e-3).any()):
        raise CheckFailure(
            f"in training mode every output coordinate of the last token is either 0 or its eval value x "
            f"{1 / (1 - p):g}: the output is dropped, not the attention weights",
            "apply dropout to the attention weights (after the softmax), not to the output")
    mean, spread = samples.mean(0), samples.std(0) / passes ** 0.5
    off = (mean - eval_out).abs() - 6 * spread - 1e-4 - 1e-3 * eval_out.abs()
    if bool((off > 0).any()):
        where = [int(i) for i in torch.unravel_index(off.argmax(), off.shape)]
        raise CheckFailure(
            f"in training mode the mean output of {passes} passes drifts from the eval output (at index "
            f"{where}: {mean[tuple(where)].item():.4g} vs {eval_out[tuple(where)].item():.4g})",
            "dropout must keep the expected output: use nn.Dropout on the attention weights, which "
            "rescales the kept weights by 1/(1-p)")


def moves_to_device(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Runs on a GPU: the CPU stands in for one (``device_forward``), so GPU-only bugs cost points anywhere."""
    # a forward pass that fails on the CPU too has another mistake: that one is named first
    module, _, _, _ = judged(spec, sub, sizes)
    try:
        shape = module.device_forward(list(spec.out_shape(sizes)[:-1]) + [sizes.d_in])
    except CheckFailure as failure:
        raise CheckFailure(
            f"after module.to(device) the forward pass fails: {failure.message}",
            Hint("everything forward uses must move with the module, or it breaks on a GPU: the mask as a registered "
                 "buffer, not a plain attribute, and any new tensor inside forward made on the input's device",
                 "self.register_buffer('mask', ...); torch.ones(..., device=x.device)")) from None
    if tuple(shape) != spec.out_shape(sizes):
        raise CheckFailure(f"on another device the output has shape {shape}, expected "
                           f"{list(spec.out_shape(sizes))}", spec.shape_hint)


# -- side effects ------------------------------------------------------------------------------

def _in_place(calls: list[str]) -> list[str]:
    """The in-place PyTorch methods among ``calls``: exp_, masked_fill_, x /= s (div_), x[i] = v."""
    names = [call.rsplit(".", 1)[-1] for call in calls]
    return [n for n in dict.fromkeys(names) if (n.endswith("_") and not n.endswith("__")) or n == "__setitem__"]


def no_side_effects(what: str, call, args: dict, calls, state=dict) -> torch.Tensor:
    """Two calls leave ``args`` and ``state()`` (weights, buffers) as they were and give the same output."""
    before = state()
    first, seen = call(*args.values())
    second, _ = call(*args.values())
    after = state()
    changed = [name for (name, given), got in zip(args.items(), seen) if not close(got, given, EXACT)]
    changed += [f"self.{name}" for name, value in before.items() if not close(after.get(name), value, EXACT)]
    if changed:
        target, ops = changed[0], _in_place(calls())
        said = target if target.startswith("self.") else f"its argument {target}"
        raise CheckFailure(f"{what} changed {said} during the call", Hint(
            f"{what} changed {said} in place{' (' + ', '.join(ops[:3]) + ')' if ops else ''}: work on a new tensor",
            f"the operations without a trailing _ return a new tensor, or {target}.clone() first",
            rank=NAMED, mistake="changed_in_place"))
    if not close(second, first, EXACT):
        raise CheckFailure(f"two calls of {what} on the same input gave different outputs",
                           Hint(f"{what} gave another output on its second call: with dropout off, nothing random may "
                                "run and nothing may carry over from one call to the next", mistake="calls_differ"))
    return first


def function_side_effects(sub, name: str, **args: torch.Tensor) -> None:
    """:func:`no_side_effects`, counted only where the output depends on the arguments (no constant)."""
    fn = sub.function(name)
    out = no_side_effects(name, fn.echo, args, lambda: fn.calls(*args.values()))
    if close(fn(*(tensor(a.shape, 99 + i) for i, a in enumerate(args.values()))), out, EXACT):
        raise CheckFailure(f"{name} gave the same output for other arguments",
                           Hint(f"{name} must compute its output from its arguments"))


def module_side_effects(spec: ModuleSpec, sub, sizes: Sizes = STRUCTURE_SIZES) -> None:
    """:func:`no_side_effects` of ``forward`` (eval mode, no dropout), counted only where the output uses the weights."""
    module, x = spec.build(sub, sizes), spec.input(sizes)
    no_side_effects(f"{spec.name}.forward", module.echo, {"x": x}, lambda: module.calls(x), module.state)
    # nothing carries over to a call on another input: the used module answers a shorter one as a new one does
    shorter = x.narrow(-2, 0, x.shape[-2] - 1)
    expected = spec.build(sub, sizes)(shorter)  # an error here is the other checks' to explain
    try:
        carried = not close(module(shorter), expected, EXACT)
    except StudentCodeError:
        carried = True
    if carried:
        raise CheckFailure(f"after a call on x, {spec.name}.forward gave another answer for x's first tokens than a "
                           "new module", Hint(f"{spec.name}.forward keeps something from one call to the next (a size, "
                                              "a tensor): compute everything from the x it is given", mistake="calls_differ"))
    expect_uses_weights(spec, sub, sizes)
