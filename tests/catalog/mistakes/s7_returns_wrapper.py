"""Returns the wrapper of 12 heads of 64 dimensions instead of MultiHeadAttention."""
STAGE = 7
HINT = "MultiHeadAttention"


def build_gpt2_small_mha():
    return MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
