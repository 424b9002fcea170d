"""Correct, in a functional style: logsumexp softmax, torch.bmm on flattened heads,
unflatten/flatten to split and merge heads, a tril mask compared with 0, and F.dropout
driven by the module's own nn.Dropout settings."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def softmax_naive(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def compute_attn_scores(inputs):
    return (inputs.unsqueeze(1) * inputs.unsqueeze(0)).sum(-1)  # every pair (i, j) by broadcasting


def compute_attn_weights(attn_scores):
    exp_scores = attn_scores.exp()
    return exp_scores / exp_scores.sum(dim=1, keepdim=True)


def compute_context_vecs(attn_weights, inputs):
    return (attn_weights.unsqueeze(-1) * inputs.unsqueeze(0)).sum(1)


def attention(queries, keys, values, mask=None, dropout=None):
    """(..., n, d) tensors; ``mask`` is 1 where a query may look."""
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(keys.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p=dropout.p, training=dropout.training)
    return weights @ values


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        return attention(x @ self.W_query, x @ self.W_key, x @ self.W_value)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return attention(self.W_query(x), self.W_key(x), self.W_value(x))


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril())

    def forward(self, x):
        n = x.shape[-2]
        return attention(self.W_query(x), self.W_key(x), self.W_value(x), self.mask[:n, :n], self.dropout)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(map(lambda _: CausalAttention(d_in, d_out, context_length, dropout, qkv_bias),
                                       range(num_heads)))

    def forward(self, x):
        return torch.cat(list(map(lambda head: head(x), self.heads)), dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} cannot be split into {num_heads} heads")
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril())

    def forward(self, x):
        b, n, d_out = x.shape[0], x.shape[1], self.out_proj.in_features
        h = self.num_heads

        def split(t):  # (b, n, d_out) -> (b * h, n, head_dim)
            return t.unflatten(-1, (h, d_out // h)).transpose(1, 2).flatten(0, 1)

        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d_out // h)
        scores = scores.masked_fill(self.mask[:n, :n] == 0, float("-inf"))
        weights = F.dropout(F.softmax(scores, dim=-1), self.dropout.p, self.training)
        context = torch.bmm(weights, v).unflatten(0, (b, h)).transpose(1, 2).flatten(2)
        return self.out_proj(context)


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)
