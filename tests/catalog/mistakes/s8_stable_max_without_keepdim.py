"""softmax_stable subtracts the maximum without keepdim: it broadcasts along the wrong axis."""
STAGE = 8
HINT = "keep their dimension"


def softmax_stable(x):
    exp_x = torch.exp(x - x.max(dim=-1).values)
    return exp_x / exp_x.sum(dim=-1, keepdim=True)
