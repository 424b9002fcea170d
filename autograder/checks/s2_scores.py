"""Stage 2 (scores): attention scores, weights and context vectors of a single sequence."""

import torch
from hypothesis import strategies as st

from autograder import book
from autograder.checks import check
from autograder.checks.common import require
from autograder.compare import BOOK, expect_close, expect_shape, close, FLOAT32
from autograder.failures import CheckFailure
from autograder.strategies import EXAMPLES, run_property, tensor

ID = "scores"

# (num_tokens, d) with num_tokens != d, so inputs.T @ inputs cannot pass for inputs @ inputs.T
token_dims = st.tuples(st.integers(2, 8), st.integers(1, 6), st.integers(0, 2**16)).filter(lambda v: v[0] != v[1])


@check(ID, 3, "book example: the 6x6 attention scores")
def scores_book(sub):
    compute_attn_scores = require(sub, "compute_attn_scores", "function")
    expect_close(compute_attn_scores(book.INPUTS), book.ATTN_SCORES, "compute_attn_scores(inputs)", tol=BOOK,
                 hint="the score of query i and key j is the dot product inputs[i] . inputs[j]")


@check(ID, 3, "all pairwise dot products on random inputs (num_tokens != d)")
def scores_random(sub):
    compute_attn_scores = require(sub, "compute_attn_scores", "function")

    def body(case):
        n, dim, seed = case
        x = tensor((n, dim), seed)
        out = compute_attn_scores(x)
        what = f"compute_attn_scores(inputs) for inputs of shape {[n, dim]}"
        expect_shape(out, (n, n), what, "one score per pair of tokens: inputs @ inputs.T "
                     "(inputs.T @ inputs pairs up the features instead)")
        expect_close(out, x.double() @ x.double().T, what, hint="inputs @ inputs.T")

    run_property(body, token_dims, examples=EXAMPLES["function"])


@check(ID, 2, "book example: the 6x6 attention weights")
def weights_book(sub):
    compute_attn_weights = require(sub, "compute_attn_weights", "function")
    expect_close(compute_attn_weights(book.ATTN_SCORES.clone()), book.ATTN_WEIGHTS,
                 "compute_attn_weights(attn_scores)", tol=BOOK, hint="torch.softmax(attn_scores, dim=-1)")


@check(ID, 3, "each row of weights sums to 1 (random, asymmetric scores)")
def weights_random(sub):
    compute_attn_weights = require(sub, "compute_attn_weights", "function")

    def body(case):
        n, _, seed = case
        # asymmetric scores: a softmax over the wrong axis cannot look right by symmetry
        scores = tensor((n, n), seed, -3, 3)
        out = compute_attn_weights(scores)
        what = f"compute_attn_weights(scores) for {n}x{n} scores"
        expect_shape(out, (n, n), what)
        sums = out.double().sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            worst = sums[(sums - 1).abs().argmax()].item()
            hint = ("the columns sum to 1: softmax over the wrong dimension? use dim=-1"
                    if close(out.double().sum(0), torch.ones(n, dtype=torch.float64), FLOAT32)
                    else "normalise each row with a softmax")
            raise CheckFailure(f"{what}: rows sum to {worst:.4g}, not 1", hint)
        expect_close(out, torch.softmax(scores.double(), -1), what, hint="torch.softmax(attn_scores, dim=-1)")

    run_property(body, token_dims, examples=EXAMPLES["function"])


@check(ID, 2, "book example: the six context vectors")
def context_book(sub):
    compute_context_vecs = require(sub, "compute_context_vecs", "function")
    weights = torch.softmax(book.INPUTS @ book.INPUTS.T, dim=-1)  # unrounded, as in the book
    expect_close(compute_context_vecs(weights, book.INPUTS), book.CONTEXT_VECS,
                 "compute_context_vecs(attn_weights, inputs)", tol=BOOK,
                 hint="each context vector is the weighted sum of the inputs: attn_weights @ inputs")


@check(ID, 2, "context vectors are convex combinations of the inputs (random weights)")
def context_random(sub):
    compute_context_vecs = require(sub, "compute_context_vecs", "function")

    def body(case):
        n, dim, seed = case
        x = tensor((n, dim), seed)
        weights = torch.softmax(tensor((n, n), seed + 1, -3, 3), -1)
        out = compute_context_vecs(weights, x)
        what = f"compute_context_vecs(attn_weights, inputs) for inputs of shape {[n, dim]}"
        expect_shape(out, (n, dim), what, "one context vector per token: attn_weights @ inputs "
                     "has shape (num_tokens, d)")
        low, high = x.min(0).values, x.max(0).values
        if ((out < low - 1e-5) | (out > high + 1e-5)).any():
            raise CheckFailure(f"{what}: a context vector lies outside the range of the inputs, so it "
                               "is not a weighted average of them",
                               "multiply the weights (rows summing to 1) by the inputs: attn_weights @ inputs")
        expect_close(out, weights.double() @ x.double(), what,
                     hint="attn_weights @ inputs (weights.T @ inputs mixes the wrong tokens)")

    run_property(body, token_dims, examples=EXAMPLES["function"])
