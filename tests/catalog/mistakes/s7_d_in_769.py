"""A typo in the input width: d_in = 769. The parameter count is off by 3 x 768, as with
qkv_bias=True, but the weights' shapes tell the two apart."""
STAGE = 7
HINT = "has shape [768, 769]"


def build_gpt2_small_mha():
    return MultiHeadAttention(769, 768, 1024, 0.0, num_heads=12)
