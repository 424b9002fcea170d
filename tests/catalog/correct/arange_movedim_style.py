"""Correct, in an index-notation style: torch.einsum with spelled-out index letters for every
product (sums included), causal masks built from torch.arange comparisons (j > i hides)
instead of triu/tril, heads split with .reshape + .movedim and merged with .movedim +
.flatten, a fused QKV split as one (3, heads, head_dim) reshape."""

import math

import torch
from torch import nn
from torch.nn import functional as F


def softmax_naive(x):
    numer = torch.exp(x)
    denom = torch.einsum("...j->...", numer)  # the sum over the last index
    return numer / denom.unsqueeze(-1)


def compute_attn_scores(inputs):
    return torch.einsum("qc,kc->qk", inputs, inputs)


def compute_attn_weights(attn_scores):
    return F.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return torch.einsum("qk,kc->qc", attn_weights, inputs)


def future_positions(length):
    """(length, length) bool: [i, j] is True when key j comes after query i (hidden)."""
    i = torch.arange(length).unsqueeze(1)
    j = torch.arange(length).unsqueeze(0)
    return j > i


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q = torch.einsum("ti,io->to", x, self.W_query)
        k = torch.einsum("ti,io->to", x, self.W_key)
        v = torch.einsum("ti,io->to", x, self.W_value)
        scores = torch.einsum("qo,ko->qk", q, k) / math.sqrt(k.size(-1))
        return torch.einsum("qk,ko->qo", F.softmax(scores, dim=-1), v)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("qo,ko->qk", q, k) / math.sqrt(k.size(-1))
        return torch.einsum("qk,ko->qo", F.softmax(scores, dim=-1), v)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", future_positions(context_length))

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("bqo,bko->bqk", q, k) / math.sqrt(k.size(-1))
        scores = scores.masked_fill(self.mask[:T, :T], -math.inf)
        weights = self.dropout(F.softmax(scores, dim=-1))
        return torch.einsum("bqk,bko->bqo", weights, v)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        stacked = torch.stack([head(x) for head in self.heads], dim=2)  # (b, t, h, o)
        return stacked.flatten(start_dim=2)  # head h fills columns [h * o, (h + 1) * o)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, f"num_heads={num_heads} does not divide d_out={d_out}"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", future_positions(context_length))

    def heads_first(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.num_heads, self.head_dim).movedim(2, 1)  # (B, H, T, D)

    def forward(self, x):
        T = x.size(1)
        q = self.heads_first(self.W_query(x))
        k = self.heads_first(self.W_key(x))
        v = self.heads_first(self.W_value(x))
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], -math.inf)
        weights = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.einsum("bhqk,bhkd->bhqd", weights, v)
        return self.out_proj(ctx.movedim(1, 2).flatten(start_dim=2))


def build_gpt2_small_mha():
    emb_dim, n_ctx, n_head = 768, 1024, 12
    return MultiHeadAttention(emb_dim, emb_dim, n_ctx, 0.0, n_head)


# ---- stage 8 (bonus) ----

def softmax_stable(x):
    shifted = x - torch.max(x, dim=-1, keepdim=True).values
    numer = torch.exp(shifted)
    return numer / torch.einsum("...j->...", numer).unsqueeze(-1)


class FusedQKVAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, f"num_heads={num_heads} does not divide d_out={d_out}"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", future_positions(context_length).float())

    def forward(self, x):
        B, T, _ = x.shape
        # columns: [queries | keys | values], each split into heads
        qkv = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).movedim((2, 3), (0, 2))
        q, k, v = qkv.unbind(0)  # each (B, H, T, D)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T].bool(), -math.inf)
        weights = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.einsum("bhqk,bhkd->bqhd", weights, v)
        return self.proj(ctx.flatten(start_dim=2))


def attn_weights_bytes(batch_size, num_heads=12, num_tokens=1024, bytes_per_value=4):
    return math.prod((batch_size, num_heads, num_tokens, num_tokens, bytes_per_value))


class SDPAMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, f"num_heads={num_heads} does not divide d_out={d_out}"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = (proj(x).reshape(B, T, self.num_heads, self.head_dim).movedim(2, 1)
                   for proj in (self.W_query, self.W_key, self.W_value))
        p = self.dropout if self.training else 0.0
        ctx = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, scale=self.head_dim ** -0.5)
        return self.out_proj(ctx.movedim(1, 2).flatten(start_dim=2))
