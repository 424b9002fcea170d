"""A missing name: the function is called `softmax`, not `softmax_naive`."""
import torch


def softmax(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
