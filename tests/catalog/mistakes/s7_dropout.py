"""GPT-2's training dropout 0.1 instead of 0.0."""
STAGE = 7
HINT = "dropout=0.0"


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.1, num_heads=12)
