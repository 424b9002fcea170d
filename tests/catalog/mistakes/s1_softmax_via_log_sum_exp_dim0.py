"""A log-sum-exp softmax with the sum over dim=0: right for the book's 1-d scores, wrong for
every batch of rows."""
STAGE = 1
HINT = "dim=-1"


def softmax_naive(x):
    return torch.exp(x - torch.logsumexp(x, dim=0, keepdim=True))
