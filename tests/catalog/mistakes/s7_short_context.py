"""context_length 256 (the chapter's small example) instead of GPT-2's 1024."""
STAGE = 7
HINT = "context_length = 1024"


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 256, 0.0, num_heads=12)
