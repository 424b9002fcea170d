"""Correct, leaning on PyTorch: torch.softmax for the naive softmax, and
F.scaled_dot_product_attention for every module (mask from the buffer, or is_causal;
dropout passed as dropout_p in training mode only). The call policy refuses stages 1, 3, 4
and 6 (they call what they teach); relaxed, it gets 100."""
REFUSED = [1, 3, 4, 6]

import torch
import torch.nn.functional as F
from torch import nn


def softmax_naive(x):
    return torch.softmax(x, dim=-1)


def compute_attn_scores(inputs):
    return inputs @ inputs.transpose(0, 1)


def compute_attn_weights(attn_scores):
    return torch.nn.Softmax(dim=-1)(attn_scores)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights.matmul(inputs)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        return F.scaled_dot_product_attention(x @ self.W_query, x @ self.W_key, x @ self.W_value)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return F.scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x))


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        n = x.shape[1]
        visible = self.mask[:n, :n] == 0  # SDPA's boolean mask: True = may attend
        p = self.dropout.p if self.training else 0.0
        return F.scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x),
                                              attn_mask=visible, dropout_p=p)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (proj(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                   for proj in (self.W_query, self.W_key, self.W_value))
        context = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 dropout_p=self.dropout.p if self.training else 0.0)
        return self.out_proj(context.transpose(1, 2).reshape(b, n, self.d_out))


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, 12)
