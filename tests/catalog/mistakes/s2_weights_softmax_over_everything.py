"""Normalises the attention weights over the whole matrix at once (F.softmax on the
flattened scores), so only the matrix sums to 1, not each row."""
STAGE = 2
HINT = "each row must"


def compute_attn_weights(attn_scores):
    flat = torch.softmax(attn_scores.flatten(), dim=0)
    return flat.view_as(attn_scores)
