"""A NumPy array and a Python list returned instead of tensors; the other two stage-2
functions are right and keep their points."""
import torch


def softmax_naive(x):
    return (torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)).numpy()


def compute_attn_scores(inputs):
    return (inputs @ inputs.T).tolist()


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
