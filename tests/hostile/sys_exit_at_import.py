"""sys.exit() before anything is defined: a valid result with 0 points."""
import sys

import torch

sys.exit("done here")


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
