"""Stage 2 (scores): attention scores, weights and context vectors of a single sequence."""

import torch

from autograder.chapters.ch03_attention import book
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.diagnosis import expect_function
from autograder.chapters.ch03_attention.checks.properties import function_side_effects
from autograder.chapters.ch03_attention.checks.spec import perturbed, require
from autograder.chapters.ch03_attention.examples import Tokens, token_matrices
from autograder.chapters.ch03_attention.programs import Program
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import BOOK, FLOAT32, close, expect_shape
from autograder.core.failures import CheckFailure, Hint
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import EXAMPLES, run_property, tensor, variation_seed

ATTN_SCORES = torch.tensor([
    [0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
    [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
    [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
    [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
    [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
    [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450],
])
ATTN_WEIGHTS = torch.tensor([
    [0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
    [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
    [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
    [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
    [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
    [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896],
])
CONTEXT_VECS = torch.tensor([
    [0.4421, 0.5931, 0.5790],
    [0.4419, 0.6515, 0.5683],
    [0.4431, 0.6496, 0.5671],
    [0.4304, 0.6298, 0.5510],
    [0.4671, 0.5910, 0.5266],
    [0.4177, 0.6503, 0.5645],
])


def attn_scores_steps(inputs):
    scores = inputs @ inputs.T
    return scores


def attn_weights_steps(attn_scores):
    weights = torch.softmax(attn_scores, dim=-1)
    return weights


def context_vecs_steps(attn_weights, inputs):
    context = attn_weights @ inputs
    return context


SCORES, WEIGHTS, CONTEXT = Program(attn_scores_steps), Program(attn_weights_steps), Program(context_vecs_steps)

ERROR_HINTS = [
    (SHAPE_ERROR, Hint("inputs are (num_tokens, d): the scores are (num_tokens x num_tokens), every token with every "
                       "token, and the context vectors (num_tokens x d)", "inputs @ inputs.T and attn_weights @ inputs")),
]

SCORES_HINT = Hint("the score of query i and key j is the dot product inputs[i] . inputs[j]", "inputs @ inputs.T")
WEIGHTS_HINT = Hint("each row of weights is a softmax of that query's scores, over the last dimension",
                    "torch.softmax(attn_scores, dim=-1)")
# a book example's points count only if the same code is right beyond the printed values
OTHER = "for the book's example changed slightly"
CONTEXT_HINT = Hint("each context vector is the weighted sum of the inputs, weighted by its query's row", "attn_weights @ inputs")


def _inputs(case: Tokens) -> torch.Tensor:
    return tensor((case.num_tokens, case.d), case.seed)


def _scores(case: Tokens) -> torch.Tensor:
    """Random and asymmetric, so a softmax over the wrong axis cannot look right by symmetry."""
    return tensor((case.num_tokens, case.num_tokens), case.seed + 1, -3, 3)


@check("2.1", 3, "book example: the 6x6 attention scores")
def scores_book(sub):
    compute_attn_scores = require(sub, "compute_attn_scores", "function")
    expect_function(compute_attn_scores(book.INPUTS), ATTN_SCORES, "compute_attn_scores(inputs)",
                    R.scores_mistakes(book.INPUTS), (book.INPUTS,), tol=BOOK, default_hint=SCORES_HINT, program=SCORES)
    x = perturbed(book.INPUTS, variation_seed())
    expect_function(compute_attn_scores(x), x.double() @ x.double().T, f"compute_attn_scores(inputs) {OTHER}",
                    R.scores_mistakes(x), (x,), default_hint=SCORES_HINT, program=SCORES)


@check("2.2", 2, "all pairwise dot products on random inputs (num_tokens != d)")
def scores_random(sub):
    compute_attn_scores = require(sub, "compute_attn_scores", "function")

    def body(case):
        x = _inputs(case)
        expect_function(compute_attn_scores(x), x.double() @ x.double().T,
                        f"compute_attn_scores(inputs) for inputs of shape {list(x.shape)}",
                        R.scores_mistakes(x), (x,), default_hint=SCORES_HINT, program=SCORES)

    run_property(body, token_matrices, examples=EXAMPLES["function"])


@check("2.3", 2, "book example: the 6x6 attention weights")
def weights_book(sub):
    compute_attn_weights = require(sub, "compute_attn_weights", "function")
    scores = ATTN_SCORES.clone()
    expect_function(compute_attn_weights(scores), ATTN_WEIGHTS, "compute_attn_weights(attn_scores)",
                    R.WEIGHTS_MISTAKES, (scores,), tol=BOOK, default_hint=WEIGHTS_HINT, program=WEIGHTS)
    other = perturbed(scores, variation_seed())
    expect_function(compute_attn_weights(other), torch.softmax(other.double(), -1),
                    f"compute_attn_weights(attn_scores) {OTHER}", R.WEIGHTS_MISTAKES, (other,),
                    default_hint=WEIGHTS_HINT, program=WEIGHTS)


@check("2.4", 3, "each row of weights sums to 1 (random, asymmetric scores)")
def weights_random(sub):
    compute_attn_weights = require(sub, "compute_attn_weights", "function")

    def body(case):
        n, scores = case.num_tokens, _scores(case)
        out = compute_attn_weights(scores)
        what = f"compute_attn_weights(scores) for {n}x{n} scores"
        expect_shape(out, (n, n), what, "one weight per score: the same shape as attn_scores")
        sums = out.double().sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            worst = sums[(sums - 1).abs().nan_to_num(1e9).argmax()].item()
            hint = (Hint("the columns sum to 1: softmax over the wrong dimension?", "dim=-1")
                    if close(out.double().sum(0), torch.ones(n, dtype=torch.float64), FLOAT32)
                    else Hint("normalise each row with a softmax", "torch.softmax(attn_scores, dim=-1)"))
            raise CheckFailure(f"{what}: rows sum to {worst:.4g}, not 1", hint)
        expect_function(out, torch.softmax(scores.double(), -1), what, R.WEIGHTS_MISTAKES, (scores,),
                        default_hint=WEIGHTS_HINT, program=WEIGHTS)

    run_property(body, token_matrices, examples=EXAMPLES["function"])


@check("2.5", 2, "book example: the six context vectors")
def context_book(sub):
    compute_context_vecs = require(sub, "compute_context_vecs", "function")
    weights = torch.softmax(book.INPUTS @ book.INPUTS.T, dim=-1)  # unrounded, as in the book
    expect_function(compute_context_vecs(weights, book.INPUTS), CONTEXT_VECS,
                    "compute_context_vecs(attn_weights, inputs)", R.CONTEXT_MISTAKES, (weights, book.INPUTS),
                    tol=BOOK, default_hint=CONTEXT_HINT, program=CONTEXT)
    x = perturbed(book.INPUTS, variation_seed())
    weights = torch.softmax(x @ x.T, dim=-1)
    expect_function(compute_context_vecs(weights, x), weights.double() @ x.double(),
                    f"compute_context_vecs(attn_weights, inputs) {OTHER}", R.CONTEXT_MISTAKES, (weights, x),
                    default_hint=CONTEXT_HINT, program=CONTEXT)


@check("2.6", 2, "context vectors are convex combinations of the inputs (random weights)")
def context_random(sub):
    compute_context_vecs = require(sub, "compute_context_vecs", "function")

    def body(case):
        x, weights = _inputs(case), torch.softmax(_scores(case), -1)
        out = compute_context_vecs(weights, x)
        what = f"compute_context_vecs(attn_weights, inputs) for inputs of shape {list(x.shape)}"
        expect_shape(out, x.shape, what, "one context vector per token: the output has shape (num_tokens, d)")
        low, high = x.min(0).values, x.max(0).values
        if ((out < low - 1e-5) | (out > high + 1e-5)).any():
            raise CheckFailure(f"{what}: a context vector lies outside the range of the inputs, so it "
                               "is not a weighted average of them",
                               Hint("multiply the weights (rows summing to 1) by the inputs", "attn_weights @ inputs"))
        expect_function(out, weights.double() @ x.double(), what, R.CONTEXT_MISTAKES, (weights, x),
                        default_hint=CONTEXT_HINT, program=CONTEXT)

    run_property(body, token_matrices, examples=EXAMPLES["function"])


@check("2.7", 1, "the three functions leave their inputs unchanged; two calls give the same output")
def side_effects(sub):
    for name in STAGE.stage.names:
        require(sub, name, "function")
    case = Tokens(num_tokens=5, d=3, seed=1)
    function_side_effects(sub, "compute_attn_scores", inputs=_inputs(case))
    function_side_effects(sub, "compute_attn_weights", attn_scores=_scores(case))
    function_side_effects(sub, "compute_context_vecs", attn_weights=torch.softmax(_scores(case), -1), inputs=_inputs(case))


STAGE = StageParts(Stage(2, "scores", "Attention scores, weights and context vectors",
                         ("compute_attn_scores", "compute_attn_weights", "compute_context_vecs")),
                   error_hints=ERROR_HINTS)
