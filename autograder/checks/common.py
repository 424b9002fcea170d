"""Checks shared by the module stages (3-7), written once and parametrised by a spec."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
from hypothesis import strategies as st

from autograder import reference as R
from autograder.compare import EXACT, FLOAT32, close, expect_close, expect_shape, fmt
from autograder.failures import CheckFailure
from autograder.strategies import Sizes, tensor


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
    """The hint of the first known mistake whose output matches the student's."""
    for name, output in variants.items():
        if close(actual, output.float(), FLOAT32) and not torch.isnan(output).all():
            return hints[name]
        if torch.isnan(output).any() and isinstance(actual, torch.Tensor) and actual.shape == output.shape \
                and torch.equal(torch.isnan(actual), torch.isnan(output)):
            return hints[name]
    return ""


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


def expect_reference(spec: ModuleSpec, actual: torch.Tensor, state: dict, x: torch.Tensor, sizes: Sizes,
                     what: str, extra_hint: str = "") -> None:
    expected = spec.reference(state, x, sizes, None)
    expect_shape(actual, expected.shape, what,
                 f"expected (batch, num_tokens, {spec.out_dim(sizes)})" if spec.batched else "")
    if close(actual, expected, FLOAT32):
        return
    variants = {}
    for mistake in spec.mistakes:
        try:
            variants[mistake] = spec.reference(state, x, sizes, mistake)
        except RuntimeError:  # a mistake that cannot even run at these sizes
            continue
    hint = diagnose(actual, variants, spec.mistakes) or extra_hint or (
        "compare each step with the book: queries/keys/values, scores, scale, mask, softmax(dim=-1), weights @ values")
    expect_close(actual, expected, what, hint=hint)


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
    module = spec.build(sub, sizes)
    state = module.state()
    module.load(_weights_for_constant_values(spec, state, sizes))
    x = spec.input(sizes)
    x[..., 0] = 1.0
    out = module(x)
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)")
    if close(out, torch.ones_like(out), FLOAT32):
        return
    sums = out.double()
    row = sums.reshape(-1, sums.shape[-1])
    if torch.isnan(row).any():
        token = int(torch.isnan(sums).nonzero()[0][-2])
        raise CheckFailure(
            f"[{sizes}] with every value vector equal to ones, the output of token {token} is NaN",
            "NaN means a whole row of scores is -inf: the mask hides the diagonal too "
            "(a token must see itself: torch.triu(..., diagonal=1))")
    bad = (row - 1).abs().max(dim=-1).values.argmax()
    value = row[bad][(row[bad] - 1).abs().argmax()].item()
    hint = "softmax over the wrong dimension?" if value > 1 else (
        "weights zeroed after the softmax without renormalising? mask the scores before the softmax")
    raise CheckFailure(
        f"[{sizes}] with every value vector equal to ones the output must be all ones (the "
        f"attention weights of each token sum to 1), but a row of weights sums to {value:.4g}", hint)


def causality(spec: ModuleSpec, sub, sizes: Sizes, position: int) -> None:
    """Changing tokens after ``position`` never changes the outputs up to ``position``."""
    t = position % (sizes.tokens - 1)
    module = spec.build(sub, sizes)
    x = spec.input(sizes)
    changed = x.clone()
    changed[:, t + 1:] = tensor(changed[:, t + 1:].shape, sizes.seed + 7, -3, 3)
    before, after = module(x), module(changed)
    expect_shape(before, spec.out_shape(sizes), f"{module.what}(x)")
    if not close(before[:, :t + 1], after[:, :t + 1], EXACT):
        diff = (before[:, :t + 1] - after[:, :t + 1]).abs().amax(dim=(0, 2))
        token = int((diff > 1e-5).nonzero()[0])
        raise CheckFailure(
            f"[{sizes}] output at token {token} changed when only tokens {t + 1}..{sizes.tokens - 1} "
            "changed", "the mask lets tokens see the future: hide the scores above the diagonal "
            "(torch.triu(..., diagonal=1)) with -inf, sliced to [:num_tokens, :num_tokens]")


def batch_independence(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    module = spec.build(sub, sizes)
    x = spec.input(sizes)
    whole = module(x)
    expect_shape(whole, spec.out_shape(sizes), f"{module.what}(x)")
    alone = module(x[:1])
    if not close(whole[:1], alone, FLOAT32):
        raise CheckFailure(f"[{sizes}] the output of the first sequence depends on the other sequences "
                           "in the batch", "keep the batch axis apart: transpose only the last two "
                           "axes (keys.transpose(1, 2) or -2, -1), never mix sequences")


def permutation_equivariance(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Without a mask, permuting the tokens permutes the outputs the same way."""
    module = spec.build(sub, sizes)
    x = spec.input(sizes)
    perm = torch.randperm(sizes.tokens, generator=torch.Generator().manual_seed(sizes.seed))
    out, out_perm = module(x), module(x[perm])
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)")
    if not close(out_perm, out[perm], FLOAT32):
        raise CheckFailure(f"[{sizes}] permuting the input tokens did not permute the output the same way",
                           "self-attention treats tokens as a set: each output row must depend only on "
                           "its own query and all keys/values")


def gradients(spec: ModuleSpec, sub, sizes: Sizes, names: list[str]) -> None:
    """Gradients reach the named weights and equal the reference's."""
    module = spec.build(sub, sizes)
    x = spec.input(sizes)
    upstream = tensor(spec.out_shape(sizes), sizes.seed + 3)
    out, grads = module.grads(x, upstream)
    expect_shape(out, spec.out_shape(sizes), f"{module.what}(x)")
    state = {k: v.detach().double().requires_grad_(True) for k, v in module.state().items()}
    ref = spec.reference(state, x, sizes, None)
    (ref * upstream.double()).sum().backward()
    for name in names:
        if name not in grads:
            raise CheckFailure(f"[{sizes}] no gradient reached {name}",
                               "part of forward is cut off from autograd: no torch.no_grad(), "
                               ".detach(), .data or new tensors built from .tolist() inside forward")
        expect_close(grads[name], state[name].grad, f"[{sizes}] the gradient of {name}",
                     hint="the forward pass computes something else than attention on these weights")


def dropout_behaviour(spec: ModuleSpec, sub, sizes: Sizes, head_blocks: int) -> None:
    """Eval mode ignores dropout; training mode drops whole attention weights.

    Token 0 attends only to itself, so with dropout on the attention weights each head's output
    for token 0 is either zero or its eval value / (1 - p). That holds for any dropout mask;
    dropout on the values or outputs zeroes single coordinates instead, and missing rescaling
    changes the expectation.
    """
    p = 0.5
    plain = spec.build(sub, sizes, dropout=0.0)
    dropped = spec.build(sub, sizes, dropout=p)
    state = plain.state()
    if spec.identity_out_proj:
        state = {**state, "out_proj.weight": torch.eye(state["out_proj.weight"].shape[0]),
                 "out_proj.bias": torch.zeros_like(state["out_proj.bias"])}
        plain.load({k: state[k] for k in ("out_proj.weight", "out_proj.bias")})
    dropped_names = set(dropped.state())
    dropped.load({k: v for k, v in state.items() if k in dropped_names})
    x = spec.input(sizes)
    reference = plain(x)
    expect_close(dropped(x), reference, f"[{sizes}] with dropout={p} in eval mode, the output",
                 hint="in eval mode (module.eval()) dropout must do nothing: use nn.Dropout, "
                      "not a hand-made random mask")
    samples = dropped.samples(x, 64, seed=sizes.seed)
    expect_shape(samples[0], reference.shape, f"{dropped.what} in training mode")
    if close(samples.std(0).sum(), torch.tensor(0.0), EXACT):
        raise CheckFailure(f"[{sizes}] dropout={p} in training mode never changed the output",
                           "apply self.dropout to the attention weights in forward")
    first = samples[:, :, 0, :].double()  # (samples, batch, out)
    expect = reference[:, 0, :].double() / (1 - p)
    block = first.shape[-1] // head_blocks
    seen = {"kept": False, "dropped": False}
    for h in range(head_blocks):
        part, exp_part = first[..., h * block:(h + 1) * block], expect[..., h * block:(h + 1) * block]
        kept = (part - exp_part).abs().amax(-1) <= 1e-4 + 1e-4 * exp_part.abs().amax(-1)
        zero = part.abs().amax(-1) <= 1e-6
        if not bool((kept | zero).all()):
            raise CheckFailure(
                f"[{sizes}] in training mode the first token's output (which attends only to itself) "
                f"must be either 0 or its eval value x {1 / (1 - p):g}; got {fmt(part[0])} with eval "
                f"value {fmt(reference[:, 0, h * block:(h + 1) * block])}",
                "apply dropout to the attention weights after the softmax (not to the scores, the "
                "values or the output), and use nn.Dropout, which rescales by 1/(1-p)")
        seen["kept"] |= bool(kept.any())
        seen["dropped"] |= bool(zero.any())
    if not (seen["kept"] and seen["dropped"]):
        raise CheckFailure(f"[{sizes}] dropout={p}: the first token's attention weight was never "
                           f"{'dropped' if seen['kept'] else 'kept'} in 64 training passes",
                           "apply dropout to the attention weights after the softmax")


def meta_device(spec: ModuleSpec, sub, sizes: Sizes) -> None:
    """Runs on another device: the ``meta`` device stands in for a GPU on a CPU machine."""
    module = spec.build(sub, sizes)
    try:
        shape = module.meta_forward(list(spec.out_shape(sizes)[:-1]) + [sizes.d_in])
    except CheckFailure as failure:
        raise CheckFailure(
            f"after module.to(device) the forward pass fails: {failure.message}",
            "everything forward uses must move with the module: register the mask with "
            "self.register_buffer('mask', ...) instead of a plain attribute, and create any new "
            "tensor inside forward with device=x.device (this breaks on a GPU; the grader "
            "detects it with PyTorch's 'meta' device)") from None
    if tuple(shape) != spec.out_shape(sizes):
        raise CheckFailure(f"on another device the output has shape {shape}, expected "
                           f"{list(spec.out_shape(sizes))}")


def mask_structure(info: dict, context_length: int, prefix: str = "") -> None:
    name = f"{prefix}mask"
    if name.split(".")[-1] in info.get("plain_tensors", {}) and name not in info["buffers"]:
        raise CheckFailure("`mask` is a plain tensor attribute, not a registered buffer",
                           "use self.register_buffer('mask', torch.triu(...)) so it moves with .to(device)")
    if name not in info["buffers"]:
        raise CheckFailure(f"no buffer named `{name}`",
                           "register the causal mask with self.register_buffer('mask', ...)")
    shape = info["buffers"][name]["shape"]
    if shape != [context_length, context_length]:
        raise CheckFailure(f"the mask buffer has shape {shape}, expected {[context_length, context_length]}",
                           "build it for the full context_length and slice it in forward")


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
