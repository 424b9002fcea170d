"""The student's side for the chapter's unit tests: modules in a namespace, behind an in-process
Submission (LocalTransport, as the notebook's own test cells grade): no worker, no notebook."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from autograder.core.submission import LocalTransport, Submission


@pytest.fixture(autouse=True, scope="package")
def one_torch_thread():
    """Tiny tensors: one thread, as the grader computes (a second OpenMP thread spinning after
    every operation makes each one many times slower on busy cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class CausalAttention(nn.Module):
    """The book's CausalAttention (listing 3.3); ``mistake`` switches in one known wrong version."""

    mistake = None

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        if self.mistake == "input_changed":
            x.mul_(2.0)
        if self.mistake == "mask_changed":  # the same mask to .bool(), another buffer
            self.mask.mul_(2.0)
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        if self.mistake == "detached_keys":
            keys = keys.detach()
        scores = queries @ keys.transpose(1, 2)
        if self.mistake != "no_mask":
            mask = self.mask.bool()[:num_tokens, :num_tokens]
            if self.mistake == "mask_made_on_cpu":
                mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
            scores = scores.masked_fill(mask, -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-2 if self.mistake == "softmax_wrong_dim" else -1)
        if self.mistake == "dropout_on_output":
            return self.dropout(weights @ values)
        out = self.dropout(weights) @ values
        if self.mistake == "batch_mixed":
            out = out + out.mean(0, keepdim=True)
        if self.mistake == "random_output":
            out = out + torch.rand_like(out)
        return out


def variant(mistake: str | None) -> type:
    """CausalAttention with ``mistake`` (None: the right one), under the contract's name."""
    return type("CausalAttention", (CausalAttention,), {"mistake": mistake})


class IgnoresWeights(CausalAttention):
    """The contract's structure, but an output that ignores the weights."""

    def forward(self, x):
        return torch.zeros(*x.shape[:-1], self.d_out)


def submission(**namespace) -> Submission:
    return Submission(LocalTransport(namespace), "Stage 4")


@pytest.fixture
def right():
    return submission(CausalAttention=variant(None))
