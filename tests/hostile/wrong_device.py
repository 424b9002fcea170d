"""The wrong device: the result is moved to the `meta` device, which holds no values (as a
tensor left on a GPU would be, for a grader that cannot reach it)."""
import torch


def softmax_naive(x):
    return (torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)).to("meta")
