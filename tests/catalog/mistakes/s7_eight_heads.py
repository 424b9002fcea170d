"""8 heads of 96 dimensions: the right parameter count, the wrong head count."""
STAGE = 7
HINT = "num_heads=12"


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=8)
