"""The chapter's computations written step by step, for the diagnosis of mistakes nobody listed.

Each function computes what a stage must output, one named step per statement
(``scores = queries @ keys.transpose(1, 2)``), on float64 inputs and weights (the caller's). :func:`autograder.core.mutation.step_variants`
changes one operation of one step at a time (a swapped operand, another axis, the mask's -inf
made +inf, a transpose dropped, ...): when the student's output equals such a variant's and no
other step's variant, the hint names that step and the change (:data:`STEPS` says each step in
the chapter's words). The catalogued mistakes of :mod:`.reference` are tried first: their hints
say more. The oracle itself stays :mod:`.reference` (PyTorch's SDPA); a test checks that these
programs compute the same.

``ALTERNATIVES``: other common ways to write a step (a tril mask compared with 0, the scale as a
power -0.5): a change of those is a different output, recognised too.
"""

from __future__ import annotations

import re

import torch

from autograder.chapters.ch03_attention.reference import linear
from autograder.core.mutation import GENERIC, Vocabulary


def softmax_steps(x):
    exp_x = torch.exp(x)
    sums = exp_x.sum(dim=-1, keepdim=True)
    normalised = exp_x / sums
    return normalised


def attn_scores_steps(inputs):
    scores = inputs @ inputs.T
    return scores


def attn_weights_steps(attn_scores):
    weights = torch.softmax(attn_scores, dim=-1)
    return weights


def context_vecs_steps(attn_weights, inputs):
    context = attn_weights @ inputs
    return context


def self_attention_v1(state, x, context_length, num_heads):
    queries = x @ state["W_query"]
    keys = x @ state["W_key"]
    values = x @ state["W_value"]
    scores = queries @ keys.T
    scaled = scores / keys.shape[-1] ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ values
    return context


def self_attention_v2(state, x, context_length, num_heads):
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    scores = queries @ keys.T
    scaled = scores / keys.shape[-1] ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ values
    return context


def causal_attention(state, x, context_length, num_heads):
    b, num_tokens, d_in = x.shape
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    scores = queries @ keys.transpose(1, 2)
    masked = scores.masked_fill(torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
                                [:num_tokens, :num_tokens], -torch.inf)
    scaled = masked / keys.shape[-1] ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ values
    return context


def multi_head_attention(state, x, context_length, num_heads):
    b, num_tokens, d_in = x.shape
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    d_out = queries.shape[-1]
    head_dim = d_out // num_heads
    q_heads = queries.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    k_heads = keys.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    v_heads = values.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    scores = q_heads @ k_heads.transpose(2, 3)
    masked = scores.masked_fill(torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
                                [:num_tokens, :num_tokens], -torch.inf)
    scaled = masked / head_dim ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ v_heads
    merged = context.transpose(1, 2).contiguous().view(b, num_tokens, d_out)
    projected = linear(state, "out_proj", merged)
    return projected


def causal_attention_scaled_first(state, x, context_length, num_heads):
    b, num_tokens, d_in = x.shape
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    scores = queries @ keys.transpose(1, 2)
    scaled = scores / keys.shape[-1] ** 0.5
    masked = scaled.masked_fill(torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
                                [:num_tokens, :num_tokens], -torch.inf)
    weights = torch.softmax(masked, dim=-1)
    context = weights @ values
    return context


def multi_head_attention_scaled_first(state, x, context_length, num_heads):
    b, num_tokens, d_in = x.shape
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    d_out = queries.shape[-1]
    head_dim = d_out // num_heads
    q_heads = queries.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    k_heads = keys.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    v_heads = values.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    scores = q_heads @ k_heads.transpose(2, 3)
    scaled = scores / head_dim ** 0.5
    masked = scaled.masked_fill(torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
                                [:num_tokens, :num_tokens], -torch.inf)
    weights = torch.softmax(masked, dim=-1)
    context = weights @ v_heads
    merged = context.transpose(1, 2).contiguous().view(b, num_tokens, d_out)
    projected = linear(state, "out_proj", merged)
    return projected


# the same computation with its steps in another order (scaled before masked: a change of the
# scale then meets finite scores, not -inf): their variants are tried too
REORDERED = {causal_attention: (causal_attention_scaled_first,),
             multi_head_attention: (multi_head_attention_scaled_first,)}

_SCALE_AS_POWER = "scaled = scores * keys.shape[-1] ** -0.5"
_TRIL_MASK = ("masked = scores.masked_fill(torch.tril(torch.ones(context_length, context_length))"
              "[:num_tokens, :num_tokens] == 0, float('-inf'))")
# a large finite number instead of -inf (a row that hides everything is then uniform, not NaN),
# filled in or added
_FINITE_MASK = ("masked = scores.masked_fill(torch.tril(torch.ones(context_length, context_length))"
                "[:num_tokens, :num_tokens] == 0, -1e9)")
_ADDITIVE_MASK = ("masked = scores + (1.0 - torch.tril(torch.ones(context_length, context_length))"
                  "[:num_tokens, :num_tokens]) * -1e9")
ALTERNATIVES: dict[object, tuple[str, ...]] = {
    self_attention_v1: (_SCALE_AS_POWER,),
    self_attention_v2: (_SCALE_AS_POWER,),
    causal_attention: ("scaled = masked * keys.shape[-1] ** -0.5", _TRIL_MASK, _FINITE_MASK, _ADDITIVE_MASK),
    multi_head_attention: ("scaled = masked * head_dim ** -0.5", _TRIL_MASK, _FINITE_MASK, _ADDITIVE_MASK),
}

# what the one-operation changes vary in this chapter's code besides core's generic tensor calls:
# the calls of attention that can be left out, the biases, the mask's triangle and its -inf
VOCABULARY = GENERIC | Vocabulary(
    droppable=frozenset({"softmax", "dropout", "masked_fill", "masked_fill_", "triu", "tril", "out_proj", "proj"}),
    keywords=("bias", "qkv_bias"), attributes=(("triu", "tril"),), strings=(("-inf", "inf"),))

# steps of one kind: when an error cannot tell them apart (x @ W_query and x @ W_key raise alike),
# the hint names the kind
GROUPS: dict[str, tuple[str, str]] = {
    "query_projection": ("projections", "the projections of the input, x @ W_query, x @ W_key, x @ W_value"),
    "key_projection": ("projections", "the projections of the input, x @ W_query, x @ W_key, x @ W_value"),
    "value_projection": ("projections", "the projections of the input, x @ W_query, x @ W_key, x @ W_value"),
    "split_queries": ("split_heads", "the split of the queries, keys or values into heads, (b, num_heads, num_tokens, head_dim)"),
    "split_keys": ("split_heads", "the split of the queries, keys or values into heads, (b, num_heads, num_tokens, head_dim)"),
    "split_values": ("split_heads", "the split of the queries, keys or values into heads, (b, num_heads, num_tokens, head_dim)"),
}

# step -> (its id in a mistake's id, the step in the chapter's words: what a hint says was changed)
STEPS: dict[str, tuple[str, str]] = {
    "exp_x": ("exp", "the exponentials of the input"),
    "sums": ("sum", "the sums of the exponentials (one per row, along the last dimension, kept for broadcasting)"),
    "normalised": ("divide_by_sum", "the division of the exponentials by their sums"),
    "queries": ("query_projection", "the queries (the input times W_query)"),
    "keys": ("key_projection", "the keys (the input times W_key)"),
    "values": ("value_projection", "the values (the input times W_value)"),
    "scores": ("scores", "the attention scores, queries @ keys transposed (every query with every key)"),
    "masked": ("mask", "the causal mask: the scores above the diagonal (the future) filled with -inf"),
    "scaled": ("scale", "the scaling of the scores by 1/sqrt(d_k)"),
    "weights": ("softmax", "the softmax over the keys (dim=-1), which makes each query's weights sum to 1"),
    "context": ("context", "the context vectors, the weights times the values"),
    "d_out": ("split_sizes", "d_out, the width of the queries"),
    "head_dim": ("split_sizes", "head_dim, the width of one head (d_out split evenly over num_heads, a whole number)"),
    "q_heads": ("split_queries", "the split of the queries into heads, (b, num_heads, num_tokens, head_dim)"),
    "k_heads": ("split_keys", "the split of the keys into heads, (b, num_heads, num_tokens, head_dim)"),
    "v_heads": ("split_values", "the split of the values into heads, (b, num_heads, num_tokens, head_dim)"),
    "merged": ("merge_heads", "the merge of the heads back into (b, num_tokens, d_out)"),
    "projected": ("out_proj", "the output projection, out_proj"),
    "return": ("output", "what the function returns"),
}


def as_written(code: str) -> str:
    """A step's code as the chapter's classes write it: ``self.W_query(x)``, ``self.W_query``."""
    code = re.sub(r"linear\(state, '(\w+)', (\w+)\)", r"self.\1(\2)", code)
    return re.sub(r"state\['(\w+)'\]", r"self.\1", code)
