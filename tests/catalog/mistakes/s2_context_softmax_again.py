"""Applies a softmax to weights that are already normalised."""
STAGE = 2
HINT = "already"


def compute_context_vecs(attn_weights, inputs):
    return torch.softmax(attn_weights, dim=-1) @ inputs
