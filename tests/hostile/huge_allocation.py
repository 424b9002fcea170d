"""A huge allocation inside stage 1 (16 GiB of float32): the worker's memory limit stops it
at once. Stage 2 is right and must still be graded."""
import torch


def softmax_naive(x):
    scratch = torch.ones(4 * 2**30)
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True) + 0 * scratch[0]


def compute_attn_scores(inputs):
    return inputs @ inputs.T


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
