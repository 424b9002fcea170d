"""The book's simple normalisation (divide by the row sum) instead of a softmax."""
STAGE = 2
HINT = "exp"


def compute_attn_weights(attn_scores):
    return attn_scores / attn_scores.sum(dim=-1, keepdim=True)
