"""Correct, written with names imported from torch (triu, ones, inf, softmax), class-level
type annotations and keyword arguments everywhere, as some learners' repositories do."""

from torch import Tensor, cat, exp, inf, ones, rand, softmax, triu
from torch.nn import Dropout, Linear, Module, ModuleList, Parameter


def softmax_naive(x: Tensor) -> Tensor:
    numerators = exp(x)
    return numerators / numerators.sum(dim=-1, keepdim=True)


def compute_attn_scores(inputs: Tensor) -> Tensor:
    return inputs.matmul(inputs.transpose(-2, -1))


def compute_attn_weights(attn_scores: Tensor) -> Tensor:
    return softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights: Tensor, inputs: Tensor) -> Tensor:
    return attn_weights.matmul(inputs)


class SelfAttention_v1(Module):
    W_query: Parameter
    W_key: Parameter
    W_value: Parameter

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.W_query = Parameter(rand(d_in, d_out))
        self.W_key = Parameter(rand(d_in, d_out))
        self.W_value = Parameter(rand(d_in, d_out))

    def forward(self, x: Tensor) -> Tensor:
        queries, keys, values = x.matmul(self.W_query), x.matmul(self.W_key), x.matmul(self.W_value)
        d_k = keys.shape[-1]
        return softmax(queries.matmul(keys.transpose(-2, -1)) / d_k ** 0.5, dim=-1).matmul(values)


class SelfAttention_v2(Module):
    W_query: Linear
    W_key: Linear
    W_value: Linear

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False) -> None:
        super().__init__()
        self.W_query = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)

    def forward(self, x: Tensor) -> Tensor:
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        d_k = keys.shape[-1]
        return softmax(queries.matmul(keys.transpose(-2, -1)) / d_k ** 0.5, dim=-1).matmul(values)


class CausalAttention(Module):
    d_out: int
    mask: Tensor

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False) -> None:
        super().__init__()
        self.d_out = d_out
        self.W_query = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.dropout = Dropout(p=dropout)
        self.register_buffer("mask", triu(ones(context_length, context_length), diagonal=1))

    def forward(self, x: Tensor) -> Tensor:
        _, num_tokens, _ = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        hidden = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores = queries.matmul(keys.transpose(-2, -1)).masked_fill(hidden, -inf)
        attn_weights = self.dropout(softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights.matmul(values)


class MultiHeadAttentionWrapper(Module):
    heads: ModuleList

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int,
                 qkv_bias: bool = False) -> None:
        super().__init__()
        self.heads = ModuleList(
            CausalAttention(d_in=d_in, d_out=d_out, context_length=context_length, dropout=dropout, qkv_bias=qkv_bias)
            for _ in range(num_heads))

    def forward(self, x: Tensor) -> Tensor:
        return cat(tuple(head(x) for head in self.heads), dim=-1)


class MultiHeadAttention(Module):
    d_out: int
    num_heads: int
    head_dim: int
    mask: Tensor

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int,
                 qkv_bias: bool = False) -> None:
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.out_proj = Linear(in_features=d_out, out_features=d_out)
        self.dropout = Dropout(p=dropout)
        self.register_buffer("mask", triu(ones(context_length, context_length), diagonal=1))

    def _heads(self, t: Tensor) -> Tensor:
        batch, num_tokens, _ = t.shape
        return t.view(batch, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: Tensor) -> Tensor:
        batch, num_tokens, _ = x.shape
        queries, keys, values = self._heads(self.W_query(x)), self._heads(self.W_key(x)), self._heads(self.W_value(x))
        hidden = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores = queries.matmul(keys.transpose(-2, -1)).masked_fill(hidden, -inf)
        attn_weights = self.dropout(softmax(attn_scores / self.head_dim ** 0.5, dim=-1))
        context = attn_weights.matmul(values).transpose(1, 2).reshape(batch, num_tokens, self.d_out)
        return self.out_proj(context)


def build_gpt2_small_mha() -> MultiHeadAttention:
    return MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12, qkv_bias=False)
