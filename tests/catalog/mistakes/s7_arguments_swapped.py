"""num_heads and dropout passed in each other's place, positionally: MultiHeadAttention(768, 768, 1024, 12, 0.0)
(the constructor takes dropout before num_heads), so num_heads is 0.0 and d_out % num_heads divides by zero."""
STAGE = 7
HINT = "argument order"


def build_gpt2_small_mha():
    return MultiHeadAttention(768, 768, 1024, 12, 0.0)
