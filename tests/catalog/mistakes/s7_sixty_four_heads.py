"""64 heads of 12 dimensions: the right parameter count and context, the wrong head count."""
STAGE = 7
HINT = "num_heads=12"
CHECK_HINTS = {"7.3": "64 heads", "7.4": "64 heads"}


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=64)
