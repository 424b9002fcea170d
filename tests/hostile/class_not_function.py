"""A class where a function was expected: `softmax_naive(x)` builds a module instead of
returning a tensor."""
import torch
from torch import nn


class softmax_naive(nn.Module):
    def __init__(self, x):
        super().__init__()
        self.x = x

    def forward(self):
        return torch.exp(self.x) / torch.exp(self.x).sum(dim=-1, keepdim=True)
