"""Trusted reference computations, in float64, from the student's own weights.

The oracle is PyTorch's ``scaled_dot_product_attention``. ``variants`` computes what common
mistakes would output on the same weights, so a wrong answer can be matched to its cause.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def d(t: torch.Tensor) -> torch.Tensor:
    """float64 on the CPU, keeping autograd's graph (the gradient check needs it)."""
    return t.to("cpu", torch.float64)


def linear(state: dict, prefix: str, x: torch.Tensor) -> torch.Tensor:
    out = x @ d(state[f"{prefix}.weight"]).T
    bias = state.get(f"{prefix}.bias")
    return out if bias is None else out + d(bias)


def sdpa(q, k, v, *, scale: float, causal: bool) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)


def attention_variant(q, k, v, *, scale: float, causal: bool, mistake: str | None) -> torch.Tensor:
    """Attention with one named mistake (None: the correct computation, by PyTorch's SDPA)."""
    if mistake is None:
        return sdpa(q, k, v, scale=scale, causal=causal)
    if mistake == "keys_queries_swapped":
        q, k = k, q
    scores = q @ k.transpose(-2, -1)
    n = scores.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    if mistake == "no_scale":
        scale = 1.0
    elif mistake == "scale_without_sqrt":
        scale = scale ** 2
    elif mistake == "scale_multiplied":
        scale = 1.0 / scale
    if causal and mistake != "no_mask":
        if mistake == "mask_hides_diagonal":
            scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(0), -math.inf)
        elif mistake == "mask_zero_fill":
            scores = scores.masked_fill(future, 0.0)
        elif mistake == "mask_transposed":
            scores = scores.masked_fill(future.T, -math.inf)
        elif mistake != "mask_after_softmax":
            scores = scores.masked_fill(future, -math.inf)
    weights = torch.softmax(scores * scale, dim=-2 if mistake == "softmax_wrong_dim" else -1)
    if causal and mistake == "mask_after_softmax":
        weights = weights.masked_fill(future, 0.0)
    return weights @ v


ATTENTION_MISTAKES: dict[str, str] = {
    "no_scale": "the scores are not scaled: divide them by sqrt(d_k) before the softmax",
    "scale_without_sqrt": "the scores are divided by d_k, not by its square root",
    "scale_multiplied": "the scores are multiplied by sqrt(d_k) instead of divided by it",
    "softmax_wrong_dim": "softmax over the wrong dimension: the weights of each query (each row) "
                         "must sum to 1, so use dim=-1",
    "keys_queries_swapped": "queries and keys are swapped: the scores are queries @ keys.T, "
                            "one row per query token",
    "mask_hides_diagonal": "the mask hides the diagonal too: a token must see itself "
                           "(torch.triu(..., diagonal=1))",
    "mask_zero_fill": "masked scores are set to 0, which still gets weight after the softmax: "
                      "fill them with -inf",
    "mask_after_softmax": "the mask is applied after the softmax without renormalising: "
                          "mask the scores with -inf before the softmax",
    "mask_transposed": "the mask is transposed: it hides the past and shows the future "
                       "(mask above the diagonal, torch.triu)",
    "no_mask": "no causal mask: every token sees the future tokens",
}
CAUSAL_ONLY = {"mask_hides_diagonal", "mask_zero_fill", "mask_after_softmax", "mask_transposed", "no_mask"}


def mistakes_for(causal: bool) -> list[str]:
    return [m for m in ATTENTION_MISTAKES if causal or m not in CAUSAL_ONLY]


# -- modules ------------------------------------------------------------------------------

def self_attention_v1(state: dict, x: torch.Tensor, mistake: str | None = None) -> torch.Tensor:
    x = d(x)
    q, k, v = (x @ d(state[n]) for n in ("W_query", "W_key", "W_value"))
    return attention_variant(q, k, v, scale=1 / math.sqrt(k.shape[-1]), causal=False, mistake=mistake)


def self_attention_v2(state: dict, x: torch.Tensor, mistake: str | None = None) -> torch.Tensor:
    x = d(x)
    q, k, v = (linear(state, n, x) for n in ("W_query", "W_key", "W_value"))
    return attention_variant(q, k, v, scale=1 / math.sqrt(k.shape[-1]), causal=False, mistake=mistake)


def causal_attention(state: dict, x: torch.Tensor, mistake: str | None = None, prefix: str = "") -> torch.Tensor:
    x = d(x)
    q, k, v = (linear(state, prefix + n, x) for n in ("W_query", "W_key", "W_value"))
    return attention_variant(q, k, v, scale=1 / math.sqrt(k.shape[-1]), causal=True, mistake=mistake)


def wrapper(state: dict, x: torch.Tensor, num_heads: int, mistake: str | None = None) -> torch.Tensor:
    return torch.cat([causal_attention(state, x, mistake, prefix=f"heads.{i}.") for i in range(num_heads)], -1)


MHA_MISTAKES: dict[str, str] = {
    "scale_by_d_out": "the scores are scaled by 1/sqrt(d_out); with heads the scale is 1/sqrt(head_dim)",
    "merge_without_transpose": "the heads are merged without moving the head axis back: "
                               "context_vec.transpose(1, 2) before .contiguous().view(b, num_tokens, d_out)",
    "no_out_proj": "the output projection out_proj is not applied to the merged heads",
    "split_order": "the last dimension is split as (head_dim, num_heads); it must be "
                   "(num_heads, head_dim), as .view(b, num_tokens, num_heads, head_dim)",
}


def multi_head(state: dict, x: torch.Tensor, num_heads: int, mistake: str | None = None) -> torch.Tensor:
    x = d(x)
    b, t, _ = x.shape
    q, k, v = (linear(state, n, x) for n in ("W_query", "W_key", "W_value"))
    d_out = q.shape[-1]
    head_dim = d_out // num_heads

    def split(z):
        if mistake == "split_order":
            return z.view(b, t, head_dim, num_heads).transpose(2, 3).transpose(1, 2)
        return z.view(b, t, num_heads, head_dim).transpose(1, 2)

    q, k, v = split(q), split(k), split(v)
    scale = 1 / math.sqrt(d_out if mistake == "scale_by_d_out" else head_dim)
    ctx = attention_variant(q, k, v, scale=scale, causal=True,
                            mistake=mistake if mistake in ATTENTION_MISTAKES else None)
    if mistake == "merge_without_transpose":
        ctx = ctx.contiguous().view(b, t, d_out)
    else:
        ctx = ctx.transpose(1, 2).contiguous().view(b, t, d_out)
    return ctx if mistake == "no_out_proj" else linear(state, "out_proj", ctx)
