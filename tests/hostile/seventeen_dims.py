"""An output of 17 dimensions, more than the grader reads from the worker: a plain message, no advice about sys.exit."""
import torch


def softmax_naive(x):
    return torch.zeros([1] * 17)
