"""Sums along dim=0, which is the last dimension only for 1-d inputs."""
STAGE = 1
HINT = "first dimension"


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0, keepdim=True)
