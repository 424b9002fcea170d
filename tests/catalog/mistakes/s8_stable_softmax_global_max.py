"""Subtracts the maximum of the whole tensor instead of each row's: a row far below it
underflows to 0 / 0."""
STAGE = 8
HINT = "each row's own maximum"


def softmax_stable(x):
    exp_x = torch.exp(x - x.max())
    return exp_x / exp_x.sum(dim=-1, keepdim=True)
