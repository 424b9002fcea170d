"""Patches every comparison it can reach, then returns garbage: torch's comparison helpers
and tensor methods, and the autograder's own functions as the worker imports them. None of
it is where the grade is computed: no more points than the blank stub (0)."""
import sys

import torch
import torch.testing

always = lambda *args, **kwargs: True  # noqa: E731
quiet = lambda *args, **kwargs: None  # noqa: E731

torch.allclose = torch.isclose = torch.equal = always
torch.testing.assert_close = torch.testing.assert_allclose = quiet
torch.Tensor.allclose = torch.Tensor.equal = always
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.__ne__ = lambda self, other: torch.zeros_like(self, dtype=torch.bool)
torch.Tensor.isnan = lambda self: torch.zeros_like(self, dtype=torch.bool)
# The grader's own modules, where the worker can read them (its fences keep them out on Linux).
try:
    import autograder.chapters.ch03_attention.checks.spec
    import autograder.core.compare
    import autograder.core.engine
    import autograder.frontends.students.notebook
    import autograder.frontends.reports.results_json

    autograder.core.compare.expect_close = autograder.core.compare.expect_shape = quiet
    autograder.core.compare.close = always
    autograder.chapters.ch03_attention.checks.spec.require = lambda sub, name, kind: (lambda *a: torch.zeros(1))
    autograder.core.engine.run_stage = quiet
    autograder.frontends.students.notebook.grade_stage = lambda number, namespace, **kw: 100
    autograder.frontends.reports.results_json.gradescope_json = lambda report: {"score": 100, "tests": []}
except (ImportError, PermissionError):
    pass
for module in list(sys.modules.values()):  # any other copy of the helpers
    if getattr(module, "expect_close", None) is not None:
        module.expect_close = quiet


def softmax_naive(x):
    return torch.zeros_like(x)


def compute_attn_scores(inputs):
    return torch.zeros(len(inputs), len(inputs))


def compute_attn_weights(attn_scores):
    return torch.zeros_like(attn_scores)


def compute_context_vecs(attn_weights, inputs):
    return torch.zeros_like(inputs)
