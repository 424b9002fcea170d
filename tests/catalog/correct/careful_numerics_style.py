"""Correct, written by a numerically careful learner: an amax-shifted softmax, torch.mm for the
scores, the scale precomputed in __init__ (self.scale = dim ** -0.5) and multiplied, the mask
kept as a boolean buffer of the allowed positions and applied with torch.where, heads split
with chunk + stack and merged with unbind + cat, and torch.dstack in the wrapper."""

import torch
import torch.nn.functional as F
from torch import nn


def softmax_naive(x):
    row_max = x.amax(dim=-1, keepdim=True)  # exp never sees a positive exponent
    e = (x - row_max).exp()
    return e / e.sum(dim=-1, keepdim=True)


def compute_attn_scores(inputs):
    return torch.mm(inputs, inputs.t())


def compute_attn_weights(attn_scores):
    return attn_scores.softmax(dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return torch.mm(attn_weights, inputs)


def _allowed(context_length):
    """True where query i may look at key j (j <= i): the complement of the book's triu mask."""
    return ~torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.scale = d_out ** -0.5

    def forward(self, x):
        q = torch.mm(x, self.W_query)
        k = torch.mm(x, self.W_key)
        v = torch.mm(x, self.W_value)
        w = (torch.mm(q, k.t()) * self.scale).softmax(dim=-1)
        return torch.mm(w, v)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.scale = d_out ** -0.5

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        w = (torch.mm(q, k.t()) * self.scale).softmax(dim=-1)
        return torch.mm(w, v)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", _allowed(context_length))
        self.scale = d_out ** -0.5

    def forward(self, x):
        t = x.shape[-2]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = torch.bmm(q, k.transpose(1, 2)) * self.scale
        s = torch.where(self.mask[:t, :t], s, float("-inf"))
        w = self.dropout(s.softmax(dim=-1))
        return torch.bmm(w, v)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias) for _ in range(num_heads)
        )

    def forward(self, x):
        return torch.dstack([head(x) for head in self.heads])  # depth = the last axis of (b, t, d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.scale = self.head_dim ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", _allowed(context_length))

    def _split(self, t):
        # (b, t, d_out) -> (b, heads, t, head_dim): head h owns columns [h * head_dim, (h + 1) * head_dim)
        return torch.stack(t.chunk(self.num_heads, dim=-1), dim=1)

    def forward(self, x):
        t = x.shape[1]
        q = self._split(self.W_query(x))
        k = self._split(self.W_key(x))
        v = self._split(self.W_value(x))
        s = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        s = torch.where(self.mask[:t, :t], s, float("-inf"))
        w = self.dropout(s.softmax(dim=-1))
        ctx = torch.matmul(w, v)
        return self.out_proj(torch.cat(ctx.unbind(dim=1), dim=-1))


def build_gpt2_small_mha():
    gpt2_small = {"d_in": 768, "d_out": 768, "context_length": 1024, "dropout": 0.0, "num_heads": 12}
    return MultiHeadAttention(**gpt2_small)


# ---- stage 8 (bonus) ----

def softmax_stable(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


class FusedQKVAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.num_heads = num_heads
        self.scale = (d_out // num_heads) ** -0.5
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        t = x.shape[1]
        q, k, v = (torch.stack(part.chunk(self.num_heads, dim=-1), dim=1) for part in self.qkv(x).chunk(3, dim=-1))
        s = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        s = torch.where(self.mask[:t, :t] == 0, s, float("-inf"))
        w = self.dropout(s.softmax(dim=-1))
        return self.proj(torch.cat(torch.matmul(w, v).unbind(dim=1), dim=-1))


def attn_weights_bytes(batch_size, num_heads=12, num_tokens=1024, bytes_per_value=4):
    return int(batch_size * num_heads * num_tokens ** 2 * bytes_per_value)


class SDPAMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        t = x.shape[1]
        q, k, v = (torch.stack(layer(x).chunk(self.num_heads, dim=-1), dim=1)
                   for layer in (self.W_query, self.W_key, self.W_value))
        allowed = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()  # True = may attend
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed,
                                             dropout_p=self.dropout if self.training else 0.0)
        return self.out_proj(torch.cat(ctx.unbind(dim=1), dim=-1))
