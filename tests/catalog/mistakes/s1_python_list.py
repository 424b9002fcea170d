"""Computes the values with math.exp and returns a Python list."""
STAGE = 1
HINT = "returned a list"


def softmax_naive(x):
    total = sum(math.exp(v) for v in x.tolist())
    return [math.exp(v) / total for v in x.tolist()]
