"""Passes head_dim (64) as d_out."""
STAGE = 7
HINT = "d_in = d_out = 768"


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 64, 1024, 0.0, num_heads=12)
