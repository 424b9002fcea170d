"""Normalises the raw values: the book's first, simple normalisation, not a softmax."""
STAGE = 1
HINT = "exp"


def softmax_naive(x):
    return x / x.sum(dim=-1, keepdim=True)
