"""out_proj built with bias=qkv_bias (no bias by default); GPT-2's out_proj has one."""
STAGE = 6
HINT = "nn.Linear(d_out, d_out)"


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)
