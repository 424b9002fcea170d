"""Correct, with a lower-triangular mask of ones kept as a buffer (1 = may attend), turned
into an additive mask of a large negative number, F.softmax, and .size() accessors."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NEG = -1e9  # exp(NEG + score) is exactly 0 in float32, as with -inf


def softmax_naive(x):
    e = x.exp()
    return e / torch.sum(e, dim=x.dim() - 1, keepdim=True)


def compute_attn_scores(inputs):
    n = inputs.size(0)
    scores = torch.empty(n, n)
    for i in range(n):
        scores[i] = inputs @ inputs[i]
    return scores


def compute_attn_weights(attn_scores):
    return F.softmax(attn_scores, dim=1)


def compute_context_vecs(attn_weights, inputs):
    return torch.mm(attn_weights, inputs)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super(SelfAttention_v1, self).__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = torch.mm(x, self.W_query), torch.mm(x, self.W_key), torch.mm(x, self.W_value)
        w = F.softmax(torch.mm(q, k.t()) / math.sqrt(k.size(1)), dim=1)
        return torch.mm(w, v)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super(SelfAttention_v2, self).__init__()
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        w = F.softmax(torch.mm(q, k.t()) / math.sqrt(k.size(1)), dim=1)
        return torch.mm(w, v)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super(CausalAttention, self).__init__()
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        t = x.size(1)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(k.size(-1))
        scores = scores + (1.0 - self.mask[:t, :t]) * NEG
        return torch.bmm(self.dropout(F.softmax(scores, dim=-1)), v)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttentionWrapper, self).__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))

    def forward(self, x):
        # (batch, tokens, heads, d_out) flattened over the last two axes: head i in columns i*d_out...
        return torch.stack([head(x) for head in self.heads], dim=2).flatten(start_dim=2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttention, self).__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        b, t, _ = x.size()
        q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.W_key(x).view(b, t, self.num_heads, self.head_dim).permute(0, 2, 3, 1)  # keys already transposed
        v = self.W_value(x).view(b, t, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        scores = torch.matmul(q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:t, :t] == 0, float("-inf"))
        w = self.dropout(F.softmax(scores, dim=-1))
        out = torch.matmul(w, v).permute(0, 2, 1, 3).reshape(b, t, self.d_out)
        return self.out_proj(out)


def build_gpt2_small_mha():
    cfg = {"d_in": 768, "d_out": 768, "context_length": 1024, "dropout": 0.0, "num_heads": 12}
    return MultiHeadAttention(**cfg)
