"""qkv_bias=True (GPT-2's pretrained weights have it), not the assignment's size."""
STAGE = 7
HINT = "qkv_bias should stay False"
# the checks that compare outputs say the same, never that the biases must be defined
CHECK_HINTS = {"7.3": "carry biases", "7.4": "carry biases"}


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12, qkv_bias=True)
