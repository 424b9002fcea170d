"""Partly wrong, and random without a seed: softmax_naive flips its output on about half of
its calls (rows still sum to 1), compute_attn_weights takes the softmax over the wrong
axis. Whether check 1.1 passes depends on the random generator, so only a grader that
seeds it the same way every time gives this the same grade twice."""
import torch


def softmax_naive(x):
    out = torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
    return out.flip(-1) if torch.rand(()) < 0.5 else out


def compute_attn_scores(inputs):
    return inputs @ inputs.T


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=0)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
