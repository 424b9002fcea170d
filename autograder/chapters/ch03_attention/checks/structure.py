"""What a module's description (its ``info`` dict) must hold: the mask buffer, the projections, the dropout."""

from __future__ import annotations

import math

from autograder.core.failures import SEEN, CheckFailure, Hint


def seen(message: str, what: str, fix: str = "", mistake: str = "") -> CheckFailure:
    """A fact read off the module itself: the stage's row shows it before a mistake guessed from outputs."""
    return CheckFailure(message, Hint(what, fix, mistake, SEEN))


def mask_structure(info: dict, context_length: int) -> None:
    if "mask" in info.get("plain_tensors", {}) and "mask" not in info["buffers"]:
        raise seen("`mask` is a plain tensor attribute, not a registered buffer",
                   "the mask must be a registered buffer so that it moves with .to(device)",
                   "self.register_buffer('mask', torch.triu(...))")
    if "mask" in info.get("params", ()):
        raise seen("`mask` is an nn.Parameter, not a registered buffer",
                   "the mask is held as an nn.Parameter, a weight to train: a constant the module keeps is a buffer",
                   "self.register_buffer('mask', torch.triu(...))", "mask_as_parameter")
    if "mask" not in info["buffers"]:
        raise seen("no buffer named `mask`", "the causal mask must be a registered buffer named mask",
                     "self.register_buffer('mask', ...)")
    shape = info["buffers"]["mask"]["shape"]
    if not covers_context(shape, context_length):
        raise seen(f"the mask buffer has shape {shape}, expected {[context_length, context_length]}",
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
            raise seen(f"`{name}` should be an nn.Linear, found {found}", f"{name} maps d_in to d_out with an nn.Linear",
                         f"self.{name} = nn.Linear(d_in, d_out, bias=qkv_bias)")
        found = info["params"].get(f"{name}.weight")
        if found != shape:
            if found == shape[::-1]:
                raise seen(f"`{name}.weight` has shape {found}, expected {shape}", f"the sizes of {name} are swapped: "
                             "nn.Linear(d_in, d_out) stores its weight as (d_out, d_in), the shape expected; yours was "
                             "created as nn.Linear(d_out, d_in)", mistake="linear_sizes_swapped")
            raise seen(f"`{name}.weight` has shape {found}, expected {shape}",
                         f"{name} maps d_in to d_out: nn.Linear(in_features, out_features)")
        if entry.get("bias") != bias:
            raise seen(f"`{name}` has {'a' if entry.get('bias') else 'no'} bias with qkv_bias={bias}",
                         f"{name}'s bias must follow the qkv_bias argument (nn.Linear has one unless told otherwise)",
                         "nn.Linear(d_in, d_out, bias=qkv_bias)", "bias_ignores_qkv_bias")


def dropout_structure(info: dict, p: float) -> None:
    entry = info["modules"].get("dropout")
    if entry is None or entry["class"] != "Dropout":
        raise seen("no nn.Dropout named `dropout`", "the module keeps its dropout layer as self.dropout, made from the "
                     "dropout argument", "self.dropout = nn.Dropout(dropout)")
    if not math.isclose(entry["p"], p):
        raise seen(f"self.dropout has p={entry['p']}, expected {p}", "the dropout layer takes its rate from the dropout "
                     "argument", "nn.Dropout(dropout)")


def out_proj_structure(info: dict, d_out: int, said: str = "") -> None:
    entry = info["modules"].get("out_proj")
    if not entry or entry["class"] != "Linear" or info["params"].get("out_proj.weight") != [d_out, d_out] \
            or not entry.get("bias"):
        no_bias = entry and entry["class"] == "Linear" and not entry.get("bias")
        raise seen(f"`out_proj` should be nn.Linear(d_out, d_out) with a bias{said}",
                   f"out_proj maps d_out to d_out, with a bias{': yours has none' if no_bias else ''}",
                   "self.out_proj = nn.Linear(d_out, d_out)", "out_proj_without_bias" if no_bias else "")
