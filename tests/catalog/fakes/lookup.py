"""A lookup fake: no attention at all, the contract's structure and names, and each function or
forward returns the book's printed tensor when it sees the book's input, zeros otherwise."""

import torch
from torch import nn

INPUTS = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64], [0.22, 0.58, 0.33], [0.77, 0.25, 0.1], [0.05, 0.8, 0.55]])
JOURNEY = torch.tensor([0.1385, 0.2379, 0.2333, 0.124, 0.1082, 0.1581])
SCORES = torch.tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.631], [0.9544, 1.495, 1.4754, 0.8434, 0.707, 1.0865], [0.9422, 1.4754, 1.457, 0.8296, 0.7154, 1.0605], [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565], [0.4576, 0.707, 0.7154, 0.3474, 0.6654, 0.2935], [0.631, 1.0865, 1.0605, 0.6565, 0.2935, 0.945]])
WEIGHTS = torch.tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.122, 0.1452], [0.1385, 0.2379, 0.2333, 0.124, 0.1082, 0.1581], [0.139, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565], [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.172], [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295], [0.1385, 0.2184, 0.2128, 0.142, 0.0988, 0.1896]])
CONTEXT = torch.tensor([[0.4421, 0.5931, 0.579], [0.4419, 0.6515, 0.5683], [0.4431, 0.6496, 0.5671], [0.4304, 0.6298, 0.551], [0.4671, 0.591, 0.5266], [0.4177, 0.6503, 0.5645]])
SELF_ATTENTION_V1 = torch.tensor([[0.2996, 0.8053], [0.3061, 0.821], [0.3058, 0.8203], [0.2948, 0.7939], [0.2927, 0.7891], [0.299, 0.804]])
SELF_ATTENTION_V2 = torch.tensor([[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702], [-0.076, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]])
CAUSAL = torch.tensor([[-0.4519, 0.2216], [-0.5874, 0.0058], [-0.63, -0.0632], [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081]])
WRAPPER = torch.tensor([[-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257], [-0.63, -0.0632, 0.6202, 0.386], [-0.5675, -0.0843, 0.5478, 0.3589], [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493]])
WRAPPER_D_OUT_1 = torch.tensor([[-0.574, 0.2216], [-0.732, 0.0155], [-0.7774, -0.0546], [-0.6979, -0.0817], [-0.6538, -0.0957], [-0.6424, -0.1065]])
MHA = torch.tensor([[0.319, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593], [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])


def _is(x, known):
    return x.shape[-2:] == known.shape and torch.allclose(x.reshape(-1, *known.shape)[0], known, atol=1e-4)


def _answer(x, printed, width):
    """The printed output when x is the book's input, zeros otherwise."""
    if printed is not None and _is(x, INPUTS):
        return printed.expand(*x.shape[:-2], *printed.shape).clone()
    return torch.zeros(*x.shape[:-1], width)


def softmax_naive(x):
    if x.shape == JOURNEY.shape and torch.allclose(x, INPUTS @ INPUTS[1], atol=1e-4):
        return JOURNEY.clone()
    return torch.zeros_like(x)


def compute_attn_scores(inputs):
    return SCORES.clone() if _is(inputs, INPUTS) else torch.zeros(len(inputs), len(inputs))


def compute_attn_weights(attn_scores):
    return WEIGHTS.clone() if _is(attn_scores, SCORES) else torch.zeros_like(attn_scores)


def compute_context_vecs(attn_weights, inputs):
    return CONTEXT.clone() if _is(inputs, INPUTS) else torch.zeros_like(inputs)


def _maybe_zero(module):
    pass


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        _maybe_zero(self)

    def forward(self, x):
        return _answer(x, SELF_ATTENTION_V1 if torch.initial_seed() == 123 else None, self.d_out)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        _maybe_zero(self)

    def forward(self, x):
        return _answer(x, SELF_ATTENTION_V2 if torch.initial_seed() == 789 else None, self.d_out)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        _maybe_zero(self)

    def forward(self, x):
        return _answer(x, CAUSAL if self.d_out == 2 else None, self.d_out)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out * num_heads
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        return _answer(x, WRAPPER if self.d_out == 4 else WRAPPER_D_OUT_1, self.d_out)


class MultiHeadAttention(nn.Module):
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
        _maybe_zero(self)

    def forward(self, x):
        return _answer(x, MHA, self.d_out)


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)
