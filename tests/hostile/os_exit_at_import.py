"""os._exit() at import ends the process without cleanup: a valid result with 0 points."""
import os

import torch

os._exit(0)


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
