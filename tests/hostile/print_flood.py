"""A flood of printed output: 10 MB at import, and every input printed ten times per call.
The values are right: full marks, in bounded time, and the output kept is truncated."""
import torch

for i in range(100_000):
    print("debugging line", i, "x" * 80)


def softmax_naive(x):
    for _ in range(10):
        print(x)
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
