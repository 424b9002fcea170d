"""Correct, with einsum everywhere: a max-shifted softmax, F.softmax, the scale applied to the
queries before the product, a boolean tril mask buffer, heads as an einsum axis."""

import torch
import torch.nn.functional as F
from torch import nn


def softmax_naive(x):
    shifted = x - x.max(dim=-1, keepdim=True).values  # numerically stable, same result
    exp_x = shifted.exp()
    return exp_x / exp_x.sum(-1, keepdim=True)


def compute_attn_scores(inputs):
    return torch.einsum("id,jd->ij", inputs, inputs)


def compute_attn_weights(attn_scores):
    return F.softmax(attn_scores, dim=1)


def compute_context_vecs(attn_weights, inputs):
    return torch.einsum("ij,jd->id", attn_weights, inputs)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q = torch.einsum("ni,io->no", x, self.W_query) * self.W_key.shape[1] ** -0.5
        k = torch.einsum("ni,io->no", x, self.W_key)
        v = torch.einsum("ni,io->no", x, self.W_value)
        return torch.einsum("qk,kd->qd", F.softmax(torch.einsum("qd,kd->qk", q, k), dim=-1), v)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        q = q * k.shape[-1] ** -0.5
        weights = F.softmax(torch.einsum("qd,kd->qk", q, k), dim=-1)
        return torch.einsum("qk,kd->qd", weights, v)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        # True where a query may look: itself and the past
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("bqd,bkd->bqk", q * k.shape[-1] ** -0.5, k)
        scores = scores.masked_fill(~self.mask[:n, :n], float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        return torch.einsum("bqk,bkd->bqd", weights, v)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))

    def forward(self, x):
        return torch.concat([h(x) for h in self.heads], dim=2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads, self.head_dim = num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        b, n, _ = x.shape
        split = lambda t: t.reshape(b, n, self.num_heads, self.head_dim)  # noqa: E731
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.head_dim ** 0.5
        scores = scores.masked_fill(~self.mask[:n, :n], float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        context = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, n, -1)
        return self.out_proj(context)


def build_gpt2_small_mha():
    return MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12)
