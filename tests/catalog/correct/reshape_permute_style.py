"""Correct, with reshape/permute/mT instead of view/transpose, torch.matmul, a scale computed
as a tensor, an additive 0/-inf mask buffer that is not persistent, masked scores filled
with the dtype's smallest value elsewhere."""

import torch
from torch import nn


def softmax_naive(x):
    numerator = torch.exp(x)
    return numerator / torch.sum(numerator, dim=x.dim() - 1, keepdim=True)


def compute_attn_scores(inputs):
    return torch.matmul(inputs, inputs.t())


def compute_attn_weights(attn_scores):
    return attn_scores.softmax(dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return torch.mm(attn_weights, inputs)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = torch.matmul(x, self.W_query), torch.matmul(x, self.W_key), torch.matmul(x, self.W_value)
        scale = torch.tensor(keys.shape[-1], dtype=x.dtype).sqrt()
        return torch.matmul((torch.matmul(queries, keys.mT) / scale).softmax(-1), values)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(queries, keys.permute(1, 0)) / keys.size(1) ** 0.5
        return torch.matmul(scores.softmax(dim=1), values)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        additive = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("mask", additive, persistent=False)

    def forward(self, x):
        n = x.size(1)
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(queries, keys.permute(0, 2, 1)) / keys.size(-1) ** 0.5
        scores = scores + self.mask[:n, :n]
        return torch.matmul(self.dropout(scores.softmax(dim=-1)), values)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias)
                                   for _ in range(num_heads))

    def forward(self, x):
        return torch.cat(tuple(head(x) for head in self.heads), -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise AssertionError(f"{d_out} is not divisible by {num_heads}")
        self.d_out, self.num_heads = d_out, num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        b, n, _ = x.shape

        def heads(t):  # (b, n, d_out) -> (b, num_heads, n, head_dim)
            return t.reshape(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        queries, keys, values = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        scores = torch.matmul(queries, keys.mT) / self.head_dim ** 0.5
        scores = scores.masked_fill(self.mask[:n, :n], torch.finfo(scores.dtype).min)
        weights = self.dropout(scores.softmax(dim=-1))
        context = torch.matmul(weights, values).permute(0, 2, 1, 3).reshape(b, n, self.d_out)
        return self.out_proj(context)


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12, qkv_bias=False)
