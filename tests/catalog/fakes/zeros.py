"""Outputs that depend on nothing: every function and module returns zeros of the right shape
(the modules have the contract's structure and names)."""

import torch
from torch import nn


def softmax_naive(x):
    return torch.zeros_like(x)


def compute_attn_scores(inputs):
    return torch.zeros(inputs.shape[0], inputs.shape[0])


def compute_attn_weights(attn_scores):
    return torch.zeros_like(attn_scores)


def compute_context_vecs(attn_weights, inputs):
    return torch.zeros_like(inputs)


class _Zeros(nn.Module):
    def forward(self, x):
        return torch.zeros(*x.shape[:-1], self.d_out, device=x.device)


class SelfAttention_v1(_Zeros):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))


class SelfAttention_v2(_Zeros):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)


class CausalAttention(_Zeros):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


class MultiHeadAttentionWrapper(_Zeros):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out * num_heads
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])


class MultiHeadAttention(_Zeros):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)
