"""Trusted reference computations in float64 (the oracle is PyTorch's SDPA), and the named mistakes:
what a common wrong solution outputs, with its hint."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from autograder.core.failures import Hint


def d(t: torch.Tensor) -> torch.Tensor:
    """float64 on the CPU, keeping autograd's graph (the gradient check needs it)."""
    return t.to("cpu", torch.float64)


# -- stages 1 and 2: functions --------------------------------------------------------------
# name -> (what the mistake computes, float64 in and out; the hint for it)
FunctionMistakes = dict[str, tuple[Callable[..., torch.Tensor], Hint | str]]


SOFTMAX_MISTAKES: FunctionMistakes = {
    "whole_tensor": (lambda x: x.exp() / x.exp().sum(),
                     Hint("the whole tensor sums to 1: take one sum per row along the last dimension", "exp_x.sum(dim=-1, keepdim=True)")),
    "no_keepdim": (lambda x: x.exp() / x.exp().sum(dim=-1),
                   Hint("the sums lost their dimension, so they divide the wrong entries: each sum must keep its axis "
                        "to broadcast against its row", "exp_x.sum(dim=-1, keepdim=True)")),
    "no_exp": (lambda x: x / x.sum(dim=-1, keepdim=True),
               "exp is missing: divide exp(x) by the sum of exp(x) (x / x.sum() is the simple "
               "normalisation the chapter replaces, and breaks on negative values)"),
    "exp_over_plain_sum": (lambda x: x.exp() / x.sum(dim=-1, keepdim=True),
                           "divide by the sum of exp(x), not by the sum of x"),
}


def softmax_mistakes(x: torch.Tensor) -> FunctionMistakes:
    """The fixed mistakes plus a sum along each dimension that is not the last one."""
    found = dict(SOFTMAX_MISTAKES)
    for dim in range(x.dim() - 1):
        which = "the first dimension (dim=0)" if dim == 0 else f"dimension {dim}"
        found[f"sum_dim_{dim}"] = (
            lambda x, dim=dim: x.exp() / x.exp().sum(dim=dim, keepdim=True),
            Hint(f"the values sum to 1 along {which}: sum along the last dimension, which is right for inputs with "
                 "any number of dimensions", "exp_x.sum(dim=-1, keepdim=True)"))
    return found


SCORES_MISTAKES: FunctionMistakes = {
    "features": (lambda x: x.T @ x,
                 Hint("inputs.T @ inputs pairs up the features; the scores pair up the tokens", "inputs @ inputs.T")),
    "elementwise": (lambda x: x * x,
                    Hint("x * x multiplies entry by entry; the scores are a dot product of every pair of tokens", "inputs @ inputs.T")),
    "row_dots": (lambda x: (x * x).sum(-1),
                 Hint("only each token with itself: the scores hold every pair (i, j)", "inputs @ inputs.T")),
}


def scores_mistakes(x: torch.Tensor) -> FunctionMistakes:
    # the chapter's first step: the scores of one query only
    one_query = {f"one_query_{i}": (lambda x, i=i: x @ x[i], Hint(f"these are the scores of token {i} only: compute "
                                    "every pair of tokens at once", "inputs @ inputs.T")) for i in range(x.shape[0])}
    return {**SCORES_MISTAKES, **one_query}


WEIGHTS_MISTAKES: FunctionMistakes = {
    "columns": (lambda s: torch.softmax(s, dim=0),
                Hint("softmax over the wrong dimension: the columns sum to 1; the weights of each query (each row) must sum to 1",
                     "torch.softmax(attn_scores, dim=-1)")),
    "divide_by_sum": (lambda s: s / s.sum(dim=-1, keepdim=True),
                      Hint("dividing by the row sum normalises but is not a softmax: exponentiate first",
                           "torch.softmax(attn_scores, dim=-1)")),
    "exp_only": (lambda s: s.exp(), "exp alone: divide by the sum of each row too (a softmax)"),
    "whole_tensor": (lambda s: s.exp() / s.exp().sum(),
                     Hint("the whole matrix sums to 1: each row must sum to 1", "torch.softmax(attn_scores, dim=-1)")),
}

CONTEXT_MISTAKES: FunctionMistakes = {
    "transposed_weights": (lambda w, x: w.T @ x,
                           Hint("attn_weights.T @ inputs mixes the wrong tokens: the context vector of query i "
                                "weights the inputs by row i of the weights", "attn_weights @ inputs")),
    "softmax_again": (lambda w, x: torch.softmax(w, dim=-1) @ x,
                      Hint("the weights are already normalised: multiply them by the inputs as they are", "attn_weights @ inputs")),
    "unweighted_mean": (lambda w, x: x.mean(0, keepdim=True).expand_as(x),
                        Hint("every context vector is the plain mean of the inputs: weight them by each query's "
                             "attention weights", "attn_weights @ inputs")),
}


def function_variants(mistakes: FunctionMistakes, *args: torch.Tensor) -> tuple[dict, dict]:
    """(outputs, hints) of the mistakes that can run on ``args`` (computed in float64)."""
    outputs, hints = {}, {}
    for name, (fn, hint) in mistakes.items():
        with contextlib.suppress(RuntimeError, IndexError):  # the mistake itself fails at these shapes
            outputs[name] = fn(*(d(a) for a in args))
            hints[name] = hint
    return outputs, hints


# -- stages 3 to 7: modules ---------------------------------------------------------------

def linear(state: dict, prefix: str, x: torch.Tensor) -> torch.Tensor:
    out = x @ d(state[f"{prefix}.weight"]).T
    bias = state.get(f"{prefix}.bias")
    return out if bias is None else out + d(bias)


def sdpa(q, k, v, **options) -> torch.Tensor:
    """PyTorch's SDPA on its math backend, the same arithmetic on every device: the fused backends
    (flash, memory-efficient, cuDNN) differ by GPU and release."""
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v, **options)


# the triu mask handed to scaled_dot_product_attention as it is (stage 8's traps)
SDPA_MASK_MISTAKES: dict[str, Hint] = {
    "sdpa_mask_inverted": Hint("the causal mask is inverted: in scaled_dot_product_attention a boolean attn_mask is "
                               "True where a token MAY attend, the opposite of the triu mask (True = hidden)",
                               "pass is_causal=True instead (or attn_mask=~mask)"),
    "sdpa_float_mask": Hint("a float attn_mask is ADDED to the scores, so a 0/1 triu mask only nudges them",
                            "pass is_causal=True (or a boolean mask, True where a token may attend)"),
}


def attention_variant(q, k, v, *, scale: float, causal: bool, mistake: str | None, d_in: int) -> torch.Tensor:
    """Attention with one named mistake (None: the correct computation, by PyTorch's SDPA).
    ``d_in``: the width of the module's input, for the mistake of scaling by it."""
    if mistake is None:
        return sdpa(q, k, v, scale=scale, is_causal=causal)
    n = q.shape[-2]
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    if mistake in SDPA_MASK_MISTAKES:
        return sdpa(q, k, v, attn_mask=future if mistake == "sdpa_mask_inverted" else future.double())
    if mistake == "keys_queries_swapped":
        q, k = k, q
    scores = q @ k.transpose(-2, -1)
    scale = {"no_scale": 1.0, "scale_without_sqrt": scale ** 2, "scale_multiplied": 1.0 / scale,
             "scale_by_d_in": 1.0 / math.sqrt(d_in)}.get(mistake, scale)
    if mistake.startswith("scale_by_keys_axis_"):
        axis = int(mistake.rsplit("_", 1)[1])
        if axis >= k.dim() - 1:
            raise RuntimeError("the keys have no such axis")
        scale = 1.0 / math.sqrt(k.shape[axis])
    if causal and mistake not in ("no_mask", "mask_after_softmax"):
        every = torch.ones(n, n, dtype=torch.bool)
        hidden, fill = {"mask_hides_diagonal": (every.triu(0), -math.inf), "mask_zero_fill": (future, 0.0),
                        "mask_transposed": (future.T, -math.inf), "mask_hides_all": (every, -math.inf),
                        "mask_pos_inf": (future, math.inf), "mask_off_by_one": (every.triu(2), -math.inf),
                        }.get(mistake, (future, -math.inf))
        scores = scores.masked_fill(hidden, fill)
    if mistake == "softmax_over_heads" and scores.dim() < 4:
        raise RuntimeError("no head axis")
    dim = {"softmax_wrong_dim": -2, "softmax_over_batch": 0, "softmax_over_heads": 1}.get(mistake, -1)
    if mistake == "scale_after_softmax":
        weights = torch.softmax(scores, dim=dim) * scale
    elif mistake == "no_softmax":
        weights = scores * scale
    else:
        weights = torch.softmax(scores * scale, dim=dim)
    if causal and mistake == "mask_after_softmax":
        weights = weights.masked_fill(future, 0.0)
    if mistake == "returns_weights":
        return weights
    return weights @ v


ATTENTION_MISTAKES: dict[str, Hint | str] = {
    "no_scale": "the scores are not scaled: divide them by sqrt(d_k) before the softmax",
    "scale_without_sqrt": "the scores are divided by d_k, not by its square root",
    "scale_multiplied": "the scores are multiplied by sqrt(d_k) instead of divided by it",
    "scale_by_d_in": Hint("the scores are scaled by the input's width d_in; the scale is 1/sqrt(d_k), d_k the keys' "
                          "width", "d_k = keys.shape[-1]"),
    "scale_after_softmax": "the weights are divided by sqrt(d_k) after the softmax, so they no longer "
                           "sum to 1: scale the scores before the softmax",
    "softmax_wrong_dim": Hint("softmax over the wrong dimension: the weights of each query (each row) must sum to 1",
                              "softmax(..., dim=-1)"),
    "softmax_over_batch": Hint("softmax over the wrong dimension: dim=0 is the batch, so the sequences mix; the "
                               "softmax runs over the keys", "softmax(..., dim=-1)"),
    "keys_queries_swapped": Hint("queries and keys are swapped: the scores have one row per query token", "queries @ keys.T"),
    "mask_hides_diagonal": Hint("the mask hides the diagonal too: a token must see itself", "torch.triu(..., diagonal=1)"),
    "mask_zero_fill": "masked scores are set to 0, which still gets weight after the softmax: "
                      "fill them with -inf",
    "mask_after_softmax": "the mask is applied after the softmax without renormalising: "
                          "mask the scores with -inf before the softmax",
    "mask_transposed": "the mask is transposed: it hides the past and shows the future "
                       "(mask above the diagonal, torch.triu)",
    "no_mask": "no causal mask: every token sees the future tokens",
    "mask_pos_inf": "the masked scores are filled with +inf instead of -inf: every query with a hidden "
                    "score gets NaN from the softmax; fill them with -inf (-torch.inf or float('-inf'))",
    "mask_hides_all": Hint("the mask hides every score, so every token's softmax is NaN: the mask is 1 only above the "
                           "diagonal", "torch.triu(torch.ones(context_length, context_length), diagonal=1)"),
    "returns_weights": Hint("forward returns the attention weights (num_tokens x num_tokens per query): the context "
                            "vectors are the weights times the values", "attn_weights @ values"),
    "no_softmax": Hint("the scores are used as weights without a softmax: each query's weights must be positive and "
                       "sum to 1", "attn_weights = torch.softmax(attn_scores / sqrt(d_k), dim=-1)"),
    "mask_off_by_one": Hint("the mask starts one diagonal too high, so each token also sees the next one: hide "
                            "everything above the diagonal", "torch.triu(..., diagonal=1)"),
    # last: at small sizes an axis often has the size of a likelier culprit, and the first match is named
    **{f"scale_by_keys_axis_{axis}": Hint(f"the scale uses another axis of the keys (keys.shape[{axis}]); d_k is the "
                                          "last one", "divide by sqrt(keys.shape[-1])") for axis in range(3)},
}
CAUSAL_ONLY = {"mask_hides_diagonal", "mask_zero_fill", "mask_after_softmax", "mask_transposed", "no_mask",
               "mask_off_by_one", "mask_pos_inf", "mask_hides_all"}
BATCHED_ONLY = {"softmax_over_batch"}


def mistakes_for(causal: bool) -> dict[str, Hint | str]:
    """The attention mistakes a module can make: the mask's and the batch's only where it has them."""
    return {m: hint for m, hint in ATTENTION_MISTAKES.items() if causal or m not in CAUSAL_ONLY | BATCHED_ONLY}


# -- modules ------------------------------------------------------------------------------

QKV = ("W_query", "W_key", "W_value")


def attention(state: dict, x: torch.Tensor, mistake: str | None = None, *, causal: bool = True,
              prefix: str = "", v1: bool = False) -> torch.Tensor:
    """Attention through nn.Linear projections (CausalAttention's; SelfAttention_v2's, not causal), or
    through SelfAttention_v1's (d_in, d_out) matrices (``v1``)."""
    x = d(x)
    q, k, v = (x @ d(state[n]) if v1 else linear(state, prefix + n, x) for n in QKV)
    return attention_variant(q, k, v, scale=1 / math.sqrt(max(1, k.shape[-1])), causal=causal, mistake=mistake,
                             d_in=x.shape[-1])


WRAPPER_MISTAKES: dict[str, Hint | str] = {
    "concat_batch": Hint("the heads' outputs are concatenated along the batch axis (dim=0): concatenate them along "
                         "the last dimension (the features)", "torch.cat([head(x) for head in self.heads], dim=-1)"),
    "concat_tokens": Hint("the heads' outputs are concatenated along the tokens (dim=1): concatenate them along the "
                          "last dimension (the features)", "torch.cat([head(x) for head in self.heads], dim=-1)"),
    "heads_reversed": Hint("the heads are concatenated in reverse order: head i fills the columns [i*d_out, "
                           "(i+1)*d_out)", "torch.cat([head(x) for head in self.heads], dim=-1)"),
}


def wrapper(state: dict, x: torch.Tensor, num_heads: int, mistake: str | None = None) -> torch.Tensor:
    order = range(num_heads - 1, -1, -1) if mistake == "heads_reversed" else range(num_heads)
    per_head = mistake if mistake in ATTENTION_MISTAKES else None
    dim = {"concat_batch": 0, "concat_tokens": 1}.get(mistake, -1)
    return torch.cat([attention(state, x, per_head, prefix=f"heads.{i}.") for i in order], dim)


MHA_MISTAKES: dict[str, Hint | str] = {
    "scale_by_d_out": "the scores are scaled by 1/sqrt(d_out); with heads the scale is 1/sqrt(head_dim)",
    "merge_without_transpose": Hint("the heads are merged without moving the head axis back behind the tokens",
                                    "context_vec.transpose(1, 2) before .contiguous().view(b, num_tokens, d_out)"),
    "no_out_proj": "the output projection out_proj is not applied to the merged heads",
    "split_order": "the last dimension is split as (head_dim, num_heads); it must be "
                   "(num_heads, head_dim), as .view(b, num_tokens, num_heads, head_dim)",
    "split_without_transpose": Hint("the heads attend across the head axis: after the split into (b, num_tokens, "
                                    "num_heads, head_dim) the head axis must move before the tokens, so each head "
                                    "attends over the tokens", ".transpose(1, 2)"),
    "split_by_view_only": Hint("the heads are split with .view(b, num_heads, num_tokens, head_dim), which mixes "
                               "tokens and features", ".view(b, num_tokens, num_heads, head_dim).transpose(1, 2)"),
    "split_heads_before_tokens": Hint("the split into heads puts the axes in the order (b, num_heads, num_tokens, "
                                      "head_dim) in one view, so each head's block cuts across tokens and features: "
                                      "the projections are (b, num_tokens, d_out), split their last axis into "
                                      "(num_heads, head_dim), then move the head axis before the tokens",
                                      ".view(b, num_tokens, num_heads, head_dim).transpose(1, 2)"),
    "softmax_over_heads": Hint("softmax over the head axis (dim=1): each query's weights must sum to 1 over the keys",
                               "softmax(..., dim=-1)"),
    "single_head": Hint("all of d_out attends as one head: split queries, keys and values into num_heads heads of "
                        "head_dim features each", "head_dim = d_out // num_heads"),
}


def multi_head(state: dict, x: torch.Tensor, num_heads: int, mistake: str | None = None) -> torch.Tensor:
    x = d(x)
    b, t, _ = x.shape
    q, k, v = (linear(state, n, x) for n in QKV)
    d_out = q.shape[-1]
    if mistake == "single_head":
        num_heads = 1
    head_dim = d_out // num_heads

    def split(z):
        if mistake == "split_order":
            return z.view(b, t, head_dim, num_heads).transpose(2, 3).transpose(1, 2)
        if mistake == "split_without_transpose":
            return z.view(b, t, num_heads, head_dim)
        if mistake in ("split_by_view_only", "split_heads_before_tokens"):
            return z.reshape(b, num_heads, t, head_dim)
        return z.view(b, t, num_heads, head_dim).transpose(1, 2)

    q, k, v = split(q), split(k), split(v)
    scale = 1 / math.sqrt(d_out if mistake == "scale_by_d_out" else head_dim)
    causal = True
    if mistake == "split_without_transpose":
        # the (num_tokens, num_tokens) mask meets (num_heads, num_heads) scores: it runs only
        # when the two agree, or when a single token's 1x1 mask broadcasts and hides nothing
        if t not in (1, num_heads):
            raise RuntimeError("this mistake raises a shape error at these sizes")
        causal = t == num_heads
    ctx = attention_variant(q, k, v, scale=scale, causal=causal, d_in=x.shape[-1],
                            mistake=mistake if mistake in (*ATTENTION_MISTAKES, "softmax_over_heads", *SDPA_MASK_MISTAKES) else None)
    if mistake not in ("merge_without_transpose", "split_without_transpose", "split_by_view_only"):
        ctx = ctx.transpose(1, 2)
    ctx = ctx.contiguous().view(b, t, d_out)
    return ctx if mistake == "no_out_proj" else linear(state, "out_proj", ctx)
