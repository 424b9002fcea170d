"""qkv_bias is accepted but the projections never get a bias."""
STAGE = 6
HINT = "bias=qkv_bias"


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads)
