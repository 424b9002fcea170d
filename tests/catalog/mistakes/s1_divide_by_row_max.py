"""Divides the exponentials by their row maximum (the stable softmax's shift, misremembered), not by
their sum. At zeros both are 1: the hint must not say the division is missing."""
STAGE = 1
HINT = "divided by the sum"


def softmax_naive(x):
    exp_x = torch.exp(x)
    return exp_x / exp_x.max(dim=-1, keepdim=True).values
