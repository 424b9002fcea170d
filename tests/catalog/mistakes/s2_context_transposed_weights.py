"""attn_weights.T @ inputs: weights each input by the other tokens' queries."""
STAGE = 2
HINT = "attn_weights @ inputs"


def compute_context_vecs(attn_weights, inputs):
    return attn_weights.T @ inputs
