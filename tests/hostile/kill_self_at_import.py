"""The submission kills its own process at import: a valid result with 0 points."""
import os
import signal

import torch

os.kill(os.getpid(), signal.SIGKILL)


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
