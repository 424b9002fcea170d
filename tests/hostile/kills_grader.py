"""Tries to kill the grader (its parent process) at import and again inside stage 1, and
to lower the grader's CPU limit. The grader must survive: stage 1 earns nothing (its
function raises when the kill is refused), stage 2 is right and keeps its points."""
import os
import resource
import signal

import torch

for attack in (lambda: os.kill(os.getppid(), signal.SIGKILL),
               lambda: os.killpg(os.getpgid(os.getppid()), signal.SIGKILL),
               lambda: resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1))):
    try:
        attack()
    except OSError:
        pass


def softmax_naive(x):
    os.kill(os.getppid(), signal.SIGKILL)
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def compute_attn_scores(inputs):
    return inputs @ inputs.T


def compute_attn_weights(attn_scores):
    return torch.softmax(attn_scores, dim=-1)


def compute_context_vecs(attn_weights, inputs):
    return attn_weights @ inputs
