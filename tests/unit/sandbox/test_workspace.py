"""The worker's dispatch helpers (autograder.sandbox.workspace) that run without a worker."""

from __future__ import annotations

import torch
from torch import nn

from autograder.sandbox.workspace import Workspace, seed_generators


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


# -- the device check (Workspace.op_device_forward): the CPU standing in for a GPU ---------------

class _Attention(nn.Module):
    """A causal attention head whose mask is made or kept as ``how`` says."""

    def __init__(self, how: str):
        super().__init__()
        self.how, self.W = how, nn.Linear(3, 3, bias=False)
        mask = torch.triu(torch.ones(6, 6), diagonal=1).bool()
        if how == "plain_attribute":
            self.mask = mask
        else:
            self.register_buffer("mask", mask)

    def forward(self, x):
        n = x.shape[1]
        scores = self.W(x) @ x.transpose(1, 2) / torch.tensor(3.0) ** 0.5  # a 0-d CPU scalar: fine on a GPU
        made = {
            "ones_in_forward": lambda: torch.triu(torch.ones(n, n), diagonal=1).bool(),
            "arange_in_forward": lambda: torch.arange(n).unsqueeze(0) > torch.arange(n).unsqueeze(1),
            "device_given": lambda: torch.triu(torch.ones(n, n, device=x.device), diagonal=1).bool(),
            "moved": lambda: torch.triu(torch.ones(n, n), diagonal=1).bool().to(x.device),
            "type_as": lambda: torch.triu(torch.ones(n, n), diagonal=1).type_as(x).bool(),
            "like": lambda: torch.triu(torch.ones_like(scores[0]), diagonal=1).bool(),
        }.get(self.how, lambda: self.mask[:n, :n])
        if self.how == "in_place_cpu_mask":
            scores.masked_fill_(torch.triu(torch.ones(n, n), diagonal=1).bool(), -torch.inf)
        else:
            scores = scores.masked_fill(made(), -torch.inf)
        out = torch.softmax(scores, dim=-1) @ x
        return out.cpu() if self.how == "output_to_cpu" else out


class _ListOfHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = [_Attention("buffer"), _Attention("buffer")]

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def _device_forward(module: nn.Module) -> dict:
    workspace = Workspace({"Module": lambda: module})
    handle = workspace.dispatch({"op": "build", "name": "Module", "args": []})["ok"]["module"]
    return workspace.dispatch({"op": "device_forward", "handle": handle, "shape": [2, 4, 3]})


def test_the_device_check_passes_what_moves_with_the_module():
    for how in ("buffer", "device_given", "moved", "type_as", "like"):
        assert _device_forward(_Attention(how)) == {"ok": {"shape": [2, 4, 3]}}, how


def test_the_device_check_fails_what_stays_on_the_cpu_as_a_gpu_would():
    for module in (*(_Attention(how) for how in ("plain_attribute", "ones_in_forward", "arange_in_forward",
                                                 "in_place_cpu_mask", "output_to_cpu")), _ListOfHeads()):
        error = _device_forward(module)["error"]
        assert error["type"] == "RuntimeError", (module, error)
        assert "device" in error["message"], (module, error)
        assert "forward" in error["where"] or getattr(module, "how", "") == "output_to_cpu", (module, error)


def test_the_calls_a_check_reads_are_the_submissions_not_the_move_of_its_inputs():
    """``calls`` names what a module's forward, or a function, calls;
    moving the inputs to the grading's device happens before the count starts."""
    workspace = Workspace({"f": lambda x: torch.softmax(x, dim=-1), "Module": lambda: nn.Softmax(dim=-1)})
    handle = workspace.dispatch({"op": "build", "name": "Module", "args": []})["ok"]["module"]
    for request in ({"op": "calls", "name": "f", "args": [torch.ones(2, 3)]},
                    {"op": "calls", "handle": handle, "x": torch.ones(2, 3)}):
        calls = workspace.dispatch(request)["ok"]["calls"]
        assert any("softmax" in c for c in calls) and not any(c.endswith("Tensor.to") for c in calls), calls


def test_a_value_that_is_no_tensor_is_shown_on_one_short_line():
    """A tuple of tensors (output and weights) prints over many lines: the message shows it on one."""
    workspace = Workspace({"f": lambda x: (x, x.T)})
    shown = workspace.dispatch({"op": "call", "name": "f", "args": [torch.rand(4, 4)]})["ok"]
    assert shown["value_type"] == "tuple" and "\n" not in shown["repr"] and len(shown["repr"]) <= 120, shown
