"""Correct, written with explicit Python loops (over tokens, sequences and heads), masked
scores filled with -1e9 instead of -inf, the mask kept as a 0/1 tril buffer."""

import math

import torch
from torch import nn


def softmax_naive(x):
    exps = torch.exp(x)
    total = torch.zeros_like(x[..., :1])
    for j in range(x.shape[-1]):
        total = total + exps[..., j:j + 1]
    return exps / total


def compute_attn_scores(inputs):
    n = inputs.shape[0]
    scores = torch.empty(n, n)
    for i in range(n):
        for j in range(n):
            scores[i, j] = torch.dot(inputs[i], inputs[j])
    return scores


def compute_attn_weights(attn_scores):
    return torch.stack([softmax_naive(row) for row in attn_scores])


def compute_context_vecs(attn_weights, inputs):
    rows = []
    for weights in attn_weights:
        context = torch.zeros(inputs.shape[1])
        for weight, x_j in zip(weights, inputs):
            context += weight * x_j
        rows.append(context)
    return torch.stack(rows)


def _attend(queries, keys, values, visible=None):
    """One sequence, one head: (n, d) tensors; visible[i, j] says whether query i sees key j."""
    out = []
    for i in range(queries.shape[0]):
        scores = keys @ queries[i] / math.sqrt(keys.shape[1])
        if visible is not None:
            scores = torch.where(visible[i], scores, torch.full_like(scores, -1e9))
        out.append(torch.softmax(scores, dim=0))
    return torch.stack(out), values


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        weights, values = _attend(x @ self.W_query, x @ self.W_key, x @ self.W_value)
        return weights @ values


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        weights, values = _attend(self.W_query(x), self.W_key(x), self.W_value(x))
        return weights @ values


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        n = x.shape[1]
        visible = self.mask[:n, :n] == 1
        outs = []
        for seq in x:
            weights, values = _attend(self.W_query(seq), self.W_key(seq), self.W_value(seq), visible)
            outs.append(self.dropout(weights) @ values)
        return torch.stack(outs)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        heads = []
        for _ in range(num_heads):
            heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))
        self.heads = nn.ModuleList(heads)

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        return torch.cat(outputs, dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        n = x.shape[1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        visible = (self.mask[:n, :n] == 1).unsqueeze(0)  # broadcast over the batch
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = queries[..., cols], keys[..., cols], values[..., cols]
            scores = q @ k.transpose(1, 2) / math.sqrt(self.head_dim)
            scores = torch.where(visible, scores, torch.full_like(scores, -1e9))
            heads.append(self.dropout(torch.softmax(scores, dim=-1)) @ v)
        return self.out_proj(torch.cat(heads, dim=-1))


def build_gpt2_small_mha():
    gpt2 = {"d_in": 768, "d_out": 768, "context_length": 1024, "dropout": 0.0, "num_heads": 12}
    return MultiHeadAttention(**gpt2)
