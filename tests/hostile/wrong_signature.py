"""A wrong signature: an extra required argument the grader does not pass."""
import torch


def softmax_naive(x, dim):
    return torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True)
