"""A very slow stage 1 (one second per call, right values): the first check (one call)
passes, then the stage's time limit stops it. Stage 2 is right and must still be graded."""
import time

import torch


def softmax_naive(x):
    time.sleep(1.0)
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def compute_attn_scores(inputs):
    return inputs @ inputs.T


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
