"""Stage 1 (softmax): softmax_naive(x) = exp(x) / sum(exp(x)) along the last dimension."""

import torch

from autograder import book
from autograder.checks import check
from autograder.checks.common import require
from autograder.compare import BOOK, FLOAT32, expect_close, expect_shape
from autograder.failures import CheckFailure
from autograder.strategies import EXAMPLES, float_arrays, run_property

ID = "softmax"


@check(ID, 3, "book example: the attention weights of 'journey'")
def book_example(sub):
    softmax_naive = require(sub, "softmax_naive", "function")
    scores = book.INPUTS @ book.INPUTS[1]
    expect_close(softmax_naive(scores), book.JOURNEY_WEIGHTS, "softmax_naive(attn_scores_2)", tol=BOOK,
                 hint="exp(x) divided by the sum of exp(x)")


def _sum_hint(out: torch.Tensor) -> str:
    if out.dim() >= 2 and torch.allclose(out.double().sum(0), torch.ones_like(out.sum(0)).double(), atol=1e-4):
        return "the values sum to 1 along the first dimension: sum along the last one (dim=-1)"
    if torch.allclose(out.double().sum(), torch.tensor(1.0, dtype=torch.float64), atol=1e-4):
        return "the whole tensor sums to 1: sum along dim=-1 with keepdim=True, one sum per row"
    return "divide by the sum along the last dimension, with keepdim=True so it broadcasts per row"


@check(ID, 4, "sums to 1 along the last dimension, positive, same shape (1-, 2- and 3-d inputs)")
def sums_to_one(sub):
    softmax_naive = require(sub, "softmax_naive", "function")

    def body(array):
        x = torch.from_numpy(array.copy())
        out = softmax_naive(x)
        what = f"softmax_naive(x) for x of shape {list(x.shape)}"
        expect_shape(out, x.shape, what, "the output has the shape of the input; sum with keepdim=True")
        sums = out.double().sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            worst = sums.flatten()[(sums.flatten() - 1).abs().argmax()].item()
            raise CheckFailure(f"{what}: a slice along the last dimension sums to {worst:.4g}, not 1 "
                               f"(x = {x.tolist()})", _sum_hint(out))
        if (out < 0).any():
            raise CheckFailure(f"{what} has negative entries", "exp() is never negative: use torch.exp")

    run_property(body, float_arrays(bound=5.0), examples=EXAMPLES["function"])


@check(ID, 3, "equals torch.softmax(x, dim=-1) on moderate inputs")
def equals_torch(sub):
    softmax_naive = require(sub, "softmax_naive", "function")

    def body(array):
        x = torch.from_numpy(array.copy())
        expect_close(softmax_naive(x), torch.softmax(x.double(), -1), f"softmax_naive(x), x = {x.tolist()}",
                     tol=FLOAT32, hint="exp(x) / exp(x).sum(dim=-1, keepdim=True)")

    run_property(body, float_arrays(bound=10.0), examples=EXAMPLES["function"])
