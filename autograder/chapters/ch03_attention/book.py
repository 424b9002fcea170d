"""The chapter's worked example, which several stages use; each stage module holds the
tensors the book prints for it (4 decimals, reproduced with torch 2.13 on CPU)."""

import torch

# "Your journey starts with one step", one 3-d embedding per token.
INPUTS = torch.tensor([
    [0.43, 0.15, 0.89],  # Your
    [0.55, 0.87, 0.66],  # journey
    [0.57, 0.85, 0.64],  # starts
    [0.22, 0.58, 0.33],  # with
    [0.77, 0.25, 0.10],  # one
    [0.05, 0.80, 0.55],  # step
])
BATCH = torch.stack((INPUTS, INPUTS))
