"""The worker's dispatch helpers (autograder.sandbox.workspace) that run without a worker."""

from __future__ import annotations

import torch
from torch import nn

from autograder.sandbox.workspace import seed_generators


def _draws() -> tuple:
    layer = nn.Linear(4, 3)
    return torch.rand(5), layer.weight.detach().clone(), torch.nn.functional.dropout(torch.ones(8), 0.5)


def test_seeding_for_a_cpu_grading_draws_what_torch_manual_seed_draws():
    """The same numbers as torch.manual_seed, which the builds' seeds stood for before: the
    book's printed tensors and every reseeded build depend on it."""
    for seed in (0, 123, 2**40):
        torch.manual_seed(seed)
        expected = _draws()
        torch.manual_seed(seed + 1)  # elsewhere first: the seeding must set the state, not keep it
        _draws()
        seed_generators(seed, torch.device("cpu"))
        for got, want in zip(_draws(), expected):
            assert torch.equal(got, want)


def test_seeding_for_another_device_is_torch_manual_seed(monkeypatch):
    seeded = []
    monkeypatch.setattr(torch, "manual_seed", lambda seed: seeded.append(seed))
    seed_generators(7, torch.device("meta"))
    assert seeded == [7]
