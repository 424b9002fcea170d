"""head_dim = d_out / num_heads: a float, which view() refuses."""
STAGE = 6
HINT = "d_out // num_heads"


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.head_dim = d_out / num_heads
