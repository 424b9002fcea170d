"""Stage 1 (softmax): softmax_naive(x) = exp(x) / sum(exp(x)) along the last dimension."""

import torch

from autograder.chapters.ch03_attention import book
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.diagnosis import expect_function, function_mistake
from autograder.chapters.ch03_attention.checks.policy import Refused, library_calls, only_refusals
from autograder.chapters.ch03_attention.checks.properties import function_side_effects
from autograder.chapters.ch03_attention.checks.spec import perturbed, require
from autograder.chapters.ch03_attention.programs import Program
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import BOOK, FLOAT32, expect_shape
from autograder.core.failures import CheckFailure, Hint
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import EXAMPLES, float_arrays, run_property, tensor, variation_seed

# softmax_naive(attn_scores[1]): the weights of the query "journey"
JOURNEY_WEIGHTS = torch.tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])


def softmax_steps(x):
    exp_x = torch.exp(x)
    sums = exp_x.sum(dim=-1, keepdim=True)
    normalised = exp_x / sums
    return normalised


PROGRAM = Program(softmax_steps)

ERROR_HINTS = [
    (r"[Dd]imension out of range", Hint("the input may have any number of dimensions (the book's scores are 1-d): "
                                        "take the sum along the last dimension, which every tensor has", "dim=-1")),
    (SHAPE_ERROR, Hint("the sums must keep their dimension to broadcast against each row", "exp_x.sum(dim=-1, keepdim=True)")),
]
SOFTMAXES = {"softmax", "_softmax", "log_softmax", "softmin"}


@only_refusals
def call_policy(sub) -> None:
    """softmax_naive is the softmax itself, and calls none."""
    if sub.kind("softmax_naive") == "missing":
        return
    found = library_calls(sub.function("softmax_naive").calls(tensor((2, 5), 1)), SOFTMAXES)
    if found:
        raise Refused("softmax_naive(x)", found, "softmax_naive is the softmax itself: compute exp(x) and divide by "
                      "its sum along the last dimension (no torch.softmax or F.softmax)")


@check("1.1", 3, "book example: the attention weights of 'journey'")
def book_example(sub):
    softmax_naive = require(sub, "softmax_naive", "function")
    scores = book.INPUTS @ book.INPUTS[1]
    expect_function(softmax_naive(scores), JOURNEY_WEIGHTS, "softmax_naive(attn_scores_2)",
                    R.softmax_mistakes(scores), (scores,), tol=BOOK,
                    default_hint="exp(x) divided by the sum of exp(x)", program=PROGRAM)
    # the points count only if the same code is right beyond the printed example
    other = perturbed(scores, variation_seed())
    expect_function(softmax_naive(other), torch.softmax(other.double(), -1),
                    "softmax_naive(x) for the book's scores changed slightly", R.softmax_mistakes(other), (other,),
                    default_hint="exp(x) divided by the sum of exp(x), computed for any input", program=PROGRAM)


def _known_mistake(out: torch.Tensor, x: torch.Tensor, default: Hint | str) -> Hint | str:
    return function_mistake(out, R.softmax_mistakes(x), (x,), PROGRAM, default)


@check("1.2", 3, "sums to 1 along the last dimension, positive, same shape (1-, 2- and 3-d inputs)")
def sums_to_one(sub):
    softmax_naive = require(sub, "softmax_naive", "function")

    def body(array):
        x = torch.from_numpy(array.copy())
        out = softmax_naive(x)
        what = f"softmax_naive(x) for x of shape {list(x.shape)}"
        expect_shape(out, x.shape, what, Hint("the output has the shape of the input: the sums keep their axis", "keepdim=True"))
        sums = out.double().sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            worst = sums.flatten()[(sums.flatten() - 1).abs().argmax()].item()
            raise CheckFailure(f"{what}: a slice along the last dimension sums to {worst:.4g}, not 1",
                               _known_mistake(out, x, Hint("divide by the sum along the last dimension, kept as an axis so "
                                                           "it broadcasts per row", "keepdim=True")))
        if (out < 0).any():
            raise CheckFailure(f"{what} has negative entries",
                               _known_mistake(out, x, "exp() is never negative: use torch.exp"))
        # softmax keeps the order: a constant or looked-up output that sums to 1 is no softmax
        larger = (x.unsqueeze(-1) - x.unsqueeze(-2)) > 1e-3
        if (larger & ~(out.unsqueeze(-1) > out.unsqueeze(-2))).any():
            raise CheckFailure(f"{what}: a larger input did not get a larger output",
                               _known_mistake(out, x, "softmax keeps the order of its inputs: exp(x) divided "
                                              "by the sum of exp(x) along the last dimension"))

    run_property(body, float_arrays(bound=5.0), examples=EXAMPLES["function"])


@check("1.3", 3, "equals torch.softmax(x, dim=-1) on moderate inputs")
def equals_torch(sub):
    softmax_naive = require(sub, "softmax_naive", "function")

    def body(array):
        x = torch.from_numpy(array.copy())
        expect_function(softmax_naive(x), torch.softmax(x.double(), -1), f"softmax_naive(x) for x of shape "
                        f"{list(x.shape)}", R.softmax_mistakes(x), (x,), tol=FLOAT32,
                        default_hint=Hint("each value's exponential divided by the sum of its row's exponentials",
                                          "exp(x) / exp(x).sum(dim=-1, keepdim=True)"), program=PROGRAM)

    run_property(body, float_arrays(bound=10.0), examples=EXAMPLES["function"])


@check("1.4", 1, "leaves its input unchanged; two calls give the same output")
def side_effects(sub):
    require(sub, "softmax_naive", "function")
    function_side_effects(sub, "softmax_naive", x=tensor((3, 5), 1))


STAGE = StageParts(Stage(1, "softmax", "Naive softmax", ("softmax_naive",)), error_hints=ERROR_HINTS,
                   call_policy=call_policy)
