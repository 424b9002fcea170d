"""Registers torch.tril(..., diagonal=1) as the mask of hidden scores: it hides the past and
the diagonal, so the last token sees nothing and its softmax is NaN."""
STAGE = 6
HINT = "NaN"
CHECK_HINTS = {"6.5": "NaN"}


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length), diagonal=1))
