"""Checks shared by the module stages (3-7), written once and parametrised by a spec."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import torch
from hypothesis import strategies as st

from autograder.chapters.ch03_attention import reference as R
from autograder.core.compare import BOOK, EXACT, FLOAT32, close, expect_close, expect_shape, fmt
from autograder.core.failures import CheckFailure, Diagnosis, StudentCodeError
from autograder.core.hints import shape_error_hint
from autograder.core.strategies import Sizes, explaining, tensor, variation_seed


def require(sub, name: str, kind: str):
    """The student's ``name``, which must be a ``kind`` ("function" or "class")."""
    found = sub.kind(name)
    if found == "missing":
        label = f" in the {sub.stage_label} cell" if sub.stage_label else ""
        raise CheckFailure(f"`{name}` is not defined",
                           f"define `{name}`{label} (exact name, case matters) and run that cell")
    if found != kind and not (kind == "function" and found == "class"):
        raise CheckFailure(f"`{name}` is a {found}, expected a {kind}",
                           f"define `{name}` with `{'def' if kind == 'function' else 'class'}`")
    return sub.function(name) if kind == "function" else name


def diagnose(actual: torch.Tensor, variants: dict[str, torch.Tensor], hints: dict[str, str]) -> str:
    """The hint of the first known mistake whose output matches the student's (same shape and
    values, or NaN in the same places), ranked NAMED when no other mistake with another hint
    matches too (at small sizes two mistakes can coincide: sqrt(num_tokens) = d_k)."""
    matched = []
    for name, output in variants.items():
        same_values = close(actual, output.float(), FLOAT32) and not torch.isnan(output).all()
        # an output that is NaN everywhere identifies no mistake (a degenerate input, such as zeros)
        same_nan = torch.isnan(output).any() and not torch.isnan(output).all() and isinstance(actual, torch.Tensor) and \
            actual.shape == output.shape and torch.equal(torch.isnan(actual), torch.isnan(output))
        if same_values or same_nan:
            matched.append(hints[name])
    if not matched:
        return ""
    distinct = list(dict.fromkeys(matched))
    if len(distinct) == 1:
        return Diagnosis(distinct[0], Diagnosis.NAMED)
    # two mistakes give this output at these sizes: say both
    return Diagnosis(f"{distinct[0]}; or, as likely here: {distinct[1]}", Diagnosis.AMBIGUOUS, tuple(distinct))


NAN_HINT = ("NaN in the output: every score of some query is hidden (-inf), so its softmax is 0/0; a token "
            "must always see itself and the past (torch.triu(..., diagonal=1) hides only the future)")


def nan_hint(actual: torch.Tensor, expected: torch.Tensor) -> str:
    """NAN_HINT when ``actual`` has NaN where ``expected`` is finite."""
    if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and actual.is_floating_point() \
            and bool((torch.isnan(actual) & torch.isfinite(expected)).any()):
        return Diagnosis(NAN_HINT, Diagnosis.NAMED)
    return ""


def expect_function(actual: torch.Tensor, expected: torch.Tensor, what: str, mistakes: R.FunctionMistakes,
                    args: tuple, *, default_hint: str, tol=FLOAT32) -> None:
    """``actual`` equals ``expected``; if not, the hint of the known mistake it matches."""
    hint = default_hint
    if not close(actual, expected, tol) and explaining():
        variants, hints = R.function_variants(mistakes, *args)
        hint = diagnose(actual, variants, hints) or default_hint
    expect_close(actual, expected, what, hint=hint, tol=tol)


@dataclass
class ModuleSpec:
    """How to build one of the student's modules for given sizes, and what it must output."""

    name: str
    batched: bool
    causal: bool
    args: Callable[[Sizes], tuple]
    reference: Callable[[dict, torch.Tensor, Sizes, str | None], torch.Tensor]
    mistakes: dict[str, str]
    out_dim: Callable[[Sizes], int]
    value_heads: Callable[[Sizes], list[str]]  # weight names that produce the values
    identity_out_proj: bool = False
    v1_style: bool = False  # parameters are (d_in, d_out) matrices, not nn.Linear
    dropout_index: int | None = None  # position of `dropout` among the constructor arguments
    heads: Callable[[Sizes], int] = field(default=lambda s: 1)
    # what to say when a weight the contract names is missing: a text, or a function of the
    # missing name and the names present
    structure_hint: str | Callable[[str, set], str] = \
        "create W_query, W_key, W_value as nn.Linear(d_in, d_out, bias=qkv_bias)"
    shape_hint: str = ""  # said when the output has the wrong shape

    def missing_weight_hint(self, missing: str, present: set) -> str:
        return self.structure_hint(missing, present) if callable(self.structure_hint) else self.structure_hint

    def build(self, sub, sizes: Sizes, *, seed: int | None = None, dropout: float | None = None, **kwargs):
        args = list(self.args(sizes))
        if dropout is not None and self.dropout_index is not None:
            args[self.dropout_index] = dropout
        return sub.build(self.name, *args, seed=sizes.seed if seed is None else seed, **kwargs)

    def input(self, sizes: Sizes, seed: int | None = None) -> torch.Tensor:
        shape = (sizes.batch, sizes.tokens, sizes.d_in) if self.batched else (sizes.tokens, sizes.d_in)
        return tensor(shape, sizes.seed + 1 if seed is None else seed)

    def out_shape(self, sizes: Sizes) -> tuple:
        lead = (sizes.batch, sizes.tokens) if self.batched else (sizes.tokens,)
        return (*lead, self.out_dim(sizes))


@contextmanager
def named_weights(spec: ModuleSpec, present=()):
    """The reference reads the student's weights by their contract names: a missing one is a
    structure mistake, said as such (not a grader error)."""
    try:
        yield
    except KeyError as missing:
        name = str(missing.args[0])
        raise CheckFailure(f"{spec.name} has no weight named {name!r}",
                           spec.missing_weight_hint(name, set(present))) from None


def load_weights(spec: ModuleSpec, module, tensors: dict) -> None:
    """Load ``tensors`` by name into the student's module, saying which contract name is missing."""
    present = set(module.info["params"]) | set(module.info["buffers"])
    with named_weights(spec, present):
        for name in tensors:
            if name not in present:
                raise KeyError(name)
    module.load(tensors)


# -- the grader's weights ----------------------------------------------------------------------

WEIGHTS_IGNORED_HINT = ("forward must compute with the module's own weights (self.W_query, self.W_key, "
                        "self.W_value, ...): no fixed or looked-up outputs, no weights replaced inside forward")


def grader_weights(module, seed: int) -> dict[str, torch.Tensor]:
    """Weights the grader draws for every parameter of ``module``, by name, from ``seed``, so the
    module is judged on weights it did not choose. Uniform in +-1/sqrt(fan_in), as nn.Linear
    initialises (v1's plain (d_in, d_out) matrices read fan_in from their first axis)."""
    drawn = {}
    for name, shape in sorted(module.info["params"].items()):
        fan_in = shape[-1] if name.endswith(".weight") else shape[0]
        bound = 1.0 / math.sqrt(max(1, fan_in))
        drawn[name] = tensor(shape, seed * 7919 + zlib.crc32(name.encode()) % 100_003, -bound, bound)
    return drawn


def load_grader_weights(module, seed: int) -> dict[str, torch.Tensor]:
    """Load :func:`grader_weights` into the student's module; returns them (the reference's state)."""
    drawn = grader_weights(module, seed)
    if drawn:
        module.load(drawn)
    return drawn


def expect_weights_matter(module, x: torch.Tensor, out: torch.Tensor, state: dict, seed: int, *,
                          restore: bool = True) -> None:
    """The output must change when other weights are loaded: zeros, constants and outputs looked
    up from the input earn no points for the properties they happen to have. ``restore``: load
    ``state`` back afterwards (a caller that no longer runs the module skips that load; at
    GPT-2's size it is 9 MB through the worker's pipe)."""
    other = grader_weights(module, seed + 104_729)
    if other:
        module.load(other)
        changed = module(x)
        if restore:
            module.load(state)
        if not close(out, changed, EXACT):
            return
    if not other:
        raise CheckFailure(f"{module.what} has no registered parameters, so its output cannot depend on them",
                           Diagnosis("layers kept in a plain Python list or dict, or created inside forward, are not "
                                     "registered: assign them to self, or hold them in nn.ModuleList", Diagnosis.NAMED))
    raise CheckFailure(f"{module.what}(x) gave the same output with other weights loaded into it: the output "
                       "does not depend on the module's weights",
                       Diagnosis(WEIGHTS_IGNORED_HINT, Diagnosis.NAMED))


def judged(spec: ModuleSpec, sub, sizes: Sizes, x: torch.Tensor | None = None, *, dropout: float | None = None):
    """The student's module for ``sizes`` with the grader's weights loaded, and its output on
    ``x``, which must have the right shape and depend on those weights: (module, state, x, out)."""
    module = spec.build(sub, sizes, dropout=dropout)
    x = spec.input(sizes) if x is None else x
    state = load_grader_weights(module, sizes.seed)
    out = module(x)
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)", spec.shape_hint)
    expect_weights_matter(module, x, out, state, sizes.seed)
    return module, state, x, out


STRUCTURE_SIZES = Sizes(batch=2, tokens=3, d_in=5, d_out=4, context_length=4, num_heads=2, seed=5)


def expect_uses_weights(spec: ModuleSpec, sub, sizes: Sizes = STRUCTURE_SIZES) -> None:
    """Structure earns points only when forward uses it: weights the output ignores (a module
    that returns zeros or looked-up values) are no attention module's weights."""
    judged(spec, sub, sizes)


def works_somewhere(spec: ModuleSpec, sub) -> bool:
    """Whether the student's module gives a real (weight-dependent) output at the structure
    sizes: code that never runs cannot vouch for the stages built on it."""
    for sizes in (STRUCTURE_SIZES, replace(STRUCTURE_SIZES, tokens=4),
                  replace(STRUCTURE_SIZES, tokens=4, d_out=2, num_heads=1)):
        try:
            expect_uses_weights(spec, sub, sizes)
            return True
        except CheckFailure:
            continue
    return False


def fails_alike(error: StudentCodeError, part, x: torch.Tensor, spec: ModuleSpec, sub) -> bool:
    """Whether ``part`` (the student's own module that a later stage builds on) raises the
    same kind of error on ``x``: then the error is the earlier stage's mistake, which costs
    points there only, provided that module works at other sizes."""
    try:
        part(x)
    except StudentCodeError as own:
        return own.exc_type == error.exc_type and works_somewhere(spec, sub)
    return False


def perturbed(x: torch.Tensor, seed: int) -> torch.Tensor:
    """The book's input moved by up to +-0.5 per entry: far enough that no lookup of the
    printed values recognises it, drawn from the variation seed (nbgrader's hidden tests use
    their own)."""
    return x + tensor(x.shape, 31 * seed + 17, -0.5, 0.5)


def expect_beyond_book(spec: ModuleSpec, module, x: torch.Tensor, sizes: Sizes) -> None:
    """A fixed-seed example's points count only if the same code is right on other inputs and
    other weights too: the book's input perturbed, the grader's weights loaded."""
    seed = variation_seed()
    x = perturbed(x, seed)
    state = load_grader_weights(module, 1000 + seed)
    out = module(x)
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)", spec.shape_hint)
    expect_weights_matter(module, x, out, state, 1000 + seed, restore=False)
    with named_weights(spec, state):
        expected = spec.reference(state, x, sizes, None)
    if close(out, expected, FLOAT32):
        return
    hint = diagnose(out, mistake_outputs(spec, state, x, sizes), spec.mistakes) or nan_hint(out, expected) or \
        ("the book's printed output is reproduced, but the same code is wrong on other inputs and weights: "
         "compute the attention itself (no printed values, no special cases for the book's example)")
    expect_close(out, expected, f"{module.what} on the book's inputs changed slightly, with other weights",
                 hint=hint)


def expect_reference(spec: ModuleSpec, actual: torch.Tensor, state: dict, x: torch.Tensor, sizes: Sizes,
                     what: str, extra_hint: str = "") -> None:
    with named_weights(spec, state):
        expected = spec.reference(state, x, sizes, None)
    expect_shape(actual, expected.shape, what, spec.shape_hint)
    if close(actual, expected, FLOAT32):
        return
    hint = diagnose(actual, mistake_outputs(spec, state, x, sizes), spec.mistakes) or \
        nan_hint(actual, expected) or extra_hint or (
        "compare each step with the book: queries/keys/values, scores, scale, mask, softmax(dim=-1), weights @ values")
    expect_close(actual, expected, what, hint=hint)


def expect_book(spec: ModuleSpec, module, x: torch.Tensor, expected: torch.Tensor, sizes: Sizes, *,
                weights_hint: str, default_hint: str) -> None:
    """The book's printed output for a fixed seed. When it differs, the module's own weights
    tell why: the right attention on them means the weights are not the book's (creation order,
    initialisation); otherwise the known mistake that explains the output, if any."""
    try:
        out = module(x)
    except StudentCodeError as failure:
        failure.hint = shape_error_hint(failure.message, sizes, failure.hint)
        raise
    what = f"{module.what}({'batch' if spec.batched else 'inputs'})"
    expect_shape(out, spec.out_shape(sizes), what, spec.shape_hint or default_hint)
    if close(out, expected, BOOK):
        expect_beyond_book(spec, module, x, sizes)
        return
    state = module.state()
    with named_weights(spec, state):
        right_attention = close(out, spec.reference(state, x, sizes, None), FLOAT32)
    hint = weights_hint if right_attention else \
        diagnose(out, mistake_outputs(spec, state, x, sizes), spec.mistakes) or nan_hint(out, expected) or \
        default_hint
    expect_close(out, expected, what, tol=BOOK, hint=hint)


def mistake_outputs(spec: ModuleSpec, state: dict, x: torch.Tensor, sizes: Sizes) -> dict:
    """What each of the spec's known mistakes outputs on these weights and this input (only
    when the failure they explain is the one shown, see ``explaining``)."""
    found = {}
    if not explaining():
        return found
    for mistake in spec.mistakes:
        try:
            found[mistake] = spec.reference(state, x, sizes, mistake)
        except RuntimeError:  # a mistake that cannot even run at these sizes
            continue
    return found


def _weights_for_constant_values(spec: ModuleSpec, state: dict, sizes: Sizes) -> dict:
    """Weights that make every value vector all ones (given inputs whose first feature is 1),
    so each output coordinate equals a row sum of the attention weights."""
    new = {}
    for prefix in spec.value_heads(sizes):
        if spec.v1_style:
            w = torch.zeros_like(state[prefix])
            w[0, :] = 1.0
            new[prefix] = w
        else:
            w = torch.zeros_like(state[f"{prefix}.weight"])
            w[:, 0] = 1.0
            new[f"{prefix}.weight"] = w
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
    module, state, _, _ = judged(spec, sub, sizes, x)
    with named_weights(spec, state):
        constant = _weights_for_constant_values(spec, state, sizes)
    load_weights(spec, module, constant)
    out = module(x)
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)", spec.shape_hint)
    if close(out, torch.ones_like(out), FLOAT32):
        return
    # every output coordinate is the sum of one row of attention weights
    row = out.double().reshape(-1, out.shape[-1])
    known = diagnose(out, mistake_outputs(spec, {**state, **constant}, x, sizes), spec.mistakes)
    if torch.isnan(row).any():
        token = int(torch.isnan(out).nonzero()[0][-2])
        raise CheckFailure(
            f"with every value vector equal to ones, the output of token {token} is NaN",
            known or "NaN means a whole row of scores is -inf: the mask hides the diagonal too "
            "(a token must see itself: torch.triu(..., diagonal=1))")
    bad = (row - 1).abs().max(dim=-1).values.argmax()
    value = row[bad][(row[bad] - 1).abs().argmax()].item()
    scale = 1 / math.sqrt(sizes.head_dim)
    if known:
        hint = known
    elif torch.allclose(row, torch.full_like(row, scale), rtol=1e-4, atol=1e-5):
        hint = ("the weights are scaled after the softmax: divide the scores by sqrt(d_k) before "
                "the softmax, so the weights still sum to 1")
    elif value > 1:
        hint = "softmax over the wrong dimension? use dim=-1, so the weights of each query sum to 1"
    else:
        hint = ("weights zeroed after the softmax without renormalising? mask the scores with -inf "
                "before the softmax")
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
        diff = (before[:, :t + 1] - after[:, :t + 1]).abs().amax(dim=(0, 2))
        token = int((diff > 1e-5).nonzero()[0])
        # a mistake elsewhere (heads mixed by a wrong view) also leaks the future: name it
        known = diagnose(before, mistake_outputs(spec, state, x, sizes), spec.mistakes)
        raise CheckFailure(
            f"output at token {token} changed when only tokens {t + 1}..{sizes.tokens - 1} "
            "changed", known or "the mask lets tokens see the future: hide the scores above the diagonal "
            "(torch.triu(..., diagonal=1)) with -inf, sliced to [:num_tokens, :num_tokens]")


def batch_independence(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    module, _, x, whole = judged(spec, sub, sizes)
    alone = module(x[:1])
    if not close(whole[:1], alone, FLOAT32):
        raise CheckFailure("the output of the first sequence depends on the other sequences "
                           "in the batch", "keep the batch axis apart: transpose only the last two "
                           "axes (keys.transpose(1, 2) or -2, -1), never mix sequences")


def permutation_equivariance(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Without a mask, permuting the tokens permutes the outputs the same way."""
    module, _, x, out = judged(spec, sub, sizes)
    perm = torch.randperm(sizes.tokens, generator=torch.Generator().manual_seed(sizes.seed))
    out_perm = module(x[perm])
    if not close(out_perm, out[perm], FLOAT32):
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
    # a wrong forward pass has wrong gradients too: name the forward's mistake first
    expect_reference(spec, out, plain_state, x, sizes, f"{module.what}(x)")
    state = {k: v.detach().double().requires_grad_(True) for k, v in plain_state.items()}
    with named_weights(spec, state):
        ref = spec.reference(state, x, sizes, None)
    (ref * upstream.double()).sum().backward()
    for name in names:
        if name not in grads:
            raise CheckFailure(f"no gradient reached {name}",
                               "part of forward is cut off from autograd: no torch.no_grad(), "
                               ".detach(), .data or new tensors built from .tolist() inside forward")
        expect_close(grads[name], state[name].grad, f"the gradient of {name}",
                     hint="the forward pass computes something else than attention on these weights")


def dropout_behaviour(spec: ModuleSpec, sub, sizes: Sizes, head_blocks: int) -> None:
    """Eval mode ignores dropout; training mode drops whole attention weights, rescaled.

    Token 0 attends only to itself, so with dropout on the attention weights each head's output
    for token 0 is either zero or its eval value / (1 - p), whatever the dropout mask (masks
    differ between machines, so no check may depend on one). The way token 0 breaks that rule
    names the mistake; the last token tells dropout on the output apart, and the mean over many
    passes must stay the eval output.
    """
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
    # dropout is judged against a right output without it; a wrong one is named first
    expect_reference(spec, reference, state, x, sizes, f"{plain.what}(x)")
    expect_close(dropped(x), reference, f"with dropout={p} in eval mode, the output",
                 hint="in eval mode (module.eval()) dropout must do nothing: use nn.Dropout, or pass "
                      "training=self.training to F.dropout")
    samples = dropped.samples(x, passes, seed=sizes.seed).double()
    expect_shape(samples[0], reference.shape, f"{dropped.what} in training mode")
    if close(samples.std(0).sum(), torch.tensor(0.0), EXACT):
        raise CheckFailure(f"dropout={p} in training mode never changed the output",
                           "apply self.dropout to the attention weights in forward (with "
                           "scaled_dot_product_attention: dropout_p=self.dropout.p if self.training else 0.0)")
    eval_out = reference.double()
    block = samples.shape[-1] // head_blocks

    def tolerance(value):
        return 1e-4 + 1e-4 * value.abs().amax(-1)

    seen = {"kept": False, "dropped": False}
    for h in range(head_blocks):
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
    # The last token attends to several tokens: dropping its weights one by one gives many
    # different outputs, while dropout on the output only ever gives 0 or the eval value x 2.
    last, eval_last = samples[:, :, -1, :], eval_out[:, -1, :]
    zero_or_scaled = ((last - eval_last / (1 - p)).abs() <= tolerance(eval_last).unsqueeze(-1)) | (last.abs() <= 1e-6)
    if sizes.tokens > 1 and bool(zero_or_scaled.all()) and bool((eval_last.abs() > 1e-3).any()):
        raise CheckFailure(
            f"in training mode every output coordinate of the last token is either 0 or its eval value x "
            f"{1 / (1 - p):g}: the output is dropped, not the attention weights",
            "apply dropout to the attention weights (after the softmax), not to the output")
    # Dropout must keep the expectation: the mean of many passes stays near the eval output.
    mean, spread = samples.mean(0), samples.std(0) / passes ** 0.5
    off = (mean - eval_out).abs() - 6 * spread - 1e-4 - 1e-3 * eval_out.abs()
    if bool((off > 0).any()):
        where = [int(i) for i in torch.unravel_index(off.argmax(), off.shape)]
        raise CheckFailure(
            f"in training mode the mean output of {passes} passes drifts from the eval output (at index "
            f"{where}: {mean[tuple(where)].item():.4g} vs {eval_out[tuple(where)].item():.4g})",
            "dropout must keep the expected output: use nn.Dropout on the attention weights, which "
            "rescales the kept weights by 1/(1-p)")


def meta_device(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Runs on another device: the ``meta`` device stands in for a GPU on a CPU machine."""
    # a forward pass that fails on the CPU too has another mistake: that one is named first
    module, _, _, _ = judged(spec, sub, sizes)
    try:
        shape = module.device_forward(list(spec.out_shape(sizes)[:-1]) + [sizes.d_in])
    except CheckFailure as failure:
        raise CheckFailure(
            f"after module.to(device) the forward pass fails: {failure.message}",
            "everything forward uses must move with the module: register the mask with "
            "self.register_buffer('mask', ...) instead of a plain attribute, and create any new "
            "tensor inside forward with device=x.device (this breaks on a GPU; the grader "
            "detects it with PyTorch's 'meta' device)") from None
    if tuple(shape) != spec.out_shape(sizes):
        raise CheckFailure(f"on another device the output has shape {shape}, expected "
                           f"{list(spec.out_shape(sizes))}", spec.shape_hint)


def mask_structure(info: dict, context_length: int, prefix: str = "") -> None:
    name = f"{prefix}mask"
    if name.split(".")[-1] in info.get("plain_tensors", {}) and name not in info["buffers"]:
        raise CheckFailure("`mask` is a plain tensor attribute, not a registered buffer",
                           "use self.register_buffer('mask', torch.triu(...)) so it moves with .to(device)")
    if name not in info["buffers"]:
        raise CheckFailure(f"no buffer named `{name}`",
                           "register the causal mask with self.register_buffer('mask', ...)")
    shape = info["buffers"][name]["shape"]
    if not covers_context(shape, context_length):
        raise CheckFailure(f"the mask buffer has shape {shape}, expected {[context_length, context_length]}",
                           "build it for the full context_length and slice it in forward")


def covers_context(shape: list[int], context_length: int) -> bool:
    """A (context_length, context_length) mask; leading axes of size 1, as in GPT-2's
    (1, 1, context_length, context_length) buffer, broadcast the same way and are fine."""
    return shape[-2:] == [context_length, context_length] and all(n == 1 for n in shape[:-2])


def linear_structure(info: dict, names: list[str], shape: list[int], bias: bool) -> None:
    for name in names:
        entry = info["modules"].get(name)
        if entry is None or entry["class"] != "Linear":
            found = entry["class"] if entry else ("a parameter" if name in info["params"] else "missing")
            raise CheckFailure(f"`{name}` should be an nn.Linear, found {found}",
                               f"self.{name} = nn.Linear(d_in, d_out, bias=qkv_bias)")
        if info["params"].get(f"{name}.weight") != shape:
            raise CheckFailure(f"`{name}.weight` has shape {info['params'].get(f'{name}.weight')}, "
                               f"expected {shape}", "nn.Linear(in_features, out_features)")
        if entry.get("bias") != bias:
            raise CheckFailure(f"`{name}` has {'a' if entry.get('bias') else 'no'} bias with qkv_bias={bias}",
                               "pass bias=qkv_bias to nn.Linear")


def dropout_structure(info: dict, p: float, prefix: str = "") -> None:
    entry = info["modules"].get(f"{prefix}dropout")
    if entry is None or entry["class"] != "Dropout":
        raise CheckFailure("no nn.Dropout named `dropout`", "self.dropout = nn.Dropout(dropout)")
    if not math.isclose(entry["p"], p):
        raise CheckFailure(f"self.dropout has p={entry['p']}, expected {p}", "nn.Dropout(dropout)")


positions = st.integers(0, 64)
