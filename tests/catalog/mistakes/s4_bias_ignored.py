"""qkv_bias is accepted but never passed to nn.Linear."""
STAGE = 4
HINT = "bias=qkv_bias"


class CausalAttention(CausalAttention):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout)
