"""The bonus stage (8) done right, appended to correct/book_style.py for the stage-8 mistakes
(the book has no stage 8, so the base has none of its own)."""

import torch.nn.functional as F


def softmax_stable(x):
    shifted = x - x.max(dim=-1, keepdim=True).values
    exp_x = torch.exp(shifted)
    return exp_x / exp_x.sum(dim=-1, keepdim=True)


class FusedQKVAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, n, _ = x.shape
        queries, keys, values = (t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                                 for t in self.qkv(x).split(self.d_out, dim=-1))
        scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.proj((weights @ values).transpose(1, 2).reshape(b, n, self.d_out))


def attn_weights_bytes(batch_size, num_heads, num_tokens, bytes_per_value):
    return batch_size * num_heads * num_tokens * num_tokens * bytes_per_value


class SDPAMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (layer(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        context = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 dropout_p=self.dropout if self.training else 0.0)
        return self.out_proj(context.transpose(1, 2).reshape(b, n, self.d_out))
