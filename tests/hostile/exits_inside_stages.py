"""Exits inside stages: softmax_naive ends its process with os._exit, compute_attn_scores
calls sys.exit. The two other stage-2 functions are right and keep their points."""
import os
import sys

import torch


def softmax_naive(x):
    os._exit(0)


def compute_attn_scores(inputs):
    sys.exit("scores done")


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
