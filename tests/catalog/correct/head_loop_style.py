"""Correct, with multi-head attention computed one head at a time in a Python loop over
column slices of the projections (a common first version before the view/transpose trick),
and torch.where for the causal mask."""

import torch
from torch import nn


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)


def compute_attn_scores(inputs):
    return torch.einsum("id,jd->ij", inputs, inputs)


def compute_attn_weights(attn_scores):
    return attn_scores.softmax(dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return torch.einsum("ij,jd->id", attn_weights, inputs)


def _attend(q, k, v, hidden=None, dropout=None):
    scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
    if hidden is not None:
        scores = torch.where(hidden, torch.full_like(scores, float("-inf")), scores)
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        return _attend(x @ self.W_query, x @ self.W_key, x @ self.W_value)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return _attend(self.W_query(x), self.W_key(x), self.W_value(x))


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        n = x.shape[-2]
        return _attend(self.W_query(x), self.W_key(x), self.W_value(x), self.mask[:n, :n], self.dropout)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        return torch.cat(outputs, dim=2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        n = x.shape[1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        per_head = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            per_head.append(_attend(queries[..., cols], keys[..., cols], values[..., cols],
                                    self.mask[:n, :n], self.dropout))
        return self.out_proj(torch.cat(per_head, dim=-1))


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
