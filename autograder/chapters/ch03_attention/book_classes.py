"""The book's CausalAttention and MultiHeadAttention, as source a stage builds in the
student's process in place of the student's own (``Submission.substitute``).

A stage is graded on its own code wherever the chapter allows: stage 5's wrapper with working
heads when the student's CausalAttention is broken (stage 4's mistake, which costs points there
only), stage 7's sizes with a MultiHeadAttention that runs at GPT-2's size. Each class creates
its weights in the book's order, so a fixed seed gives the book's numbers.
"""

_IMPORTS = "import math\nimport torch\nfrom torch import nn\n\n\n"

CAUSAL_ATTENTION = _IMPORTS + '''class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)) @ values
'''

MULTI_HEAD_ATTENTION = _IMPORTS + '''class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        split = (b, num_tokens, self.num_heads, self.head_dim)
        queries, keys, values = (w(x).view(split).transpose(1, 2) for w in (self.W_query, self.W_key, self.W_value))
        scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / math.sqrt(self.head_dim), dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))
'''
