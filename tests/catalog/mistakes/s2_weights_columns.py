"""Softmax over the columns (dim=0)."""
STAGE = 2
HINT = "dim=-1"


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=0)
