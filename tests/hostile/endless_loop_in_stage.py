"""An endless loop inside stage 1; stage 2 is right and must still be graded."""
import torch


def softmax_naive(x):
    while True:
        pass


def compute_attn_scores(inputs):
    return inputs @ inputs.T


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
