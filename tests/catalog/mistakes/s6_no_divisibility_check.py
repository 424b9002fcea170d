"""Accepts d_out that num_heads does not divide (head_dim silently rounds down)."""
STAGE = 6
HINT = "d_out % num_heads"


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
