"""NaN outputs: every value is 0/0."""
import torch


def softmax_naive(x):
    e = torch.exp(x)
    return (e - e) / (e - e)
