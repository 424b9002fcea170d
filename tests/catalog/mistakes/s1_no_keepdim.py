"""Sums without keepdim=True, so the sums broadcast against the wrong axis."""
STAGE = 1
HINT = "keepdim=True"


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1)
