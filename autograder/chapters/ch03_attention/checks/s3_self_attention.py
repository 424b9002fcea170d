"""Stage 3 (self_attention): SelfAttention_v1 (nn.Parameter) and SelfAttention_v2 (nn.Linear)."""

from dataclasses import replace

import torch

from autograder.chapters.ch03_attention import book, exhibits
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.diagnosis import diagnose_module, expect_book
from autograder.chapters.ch03_attention.checks.policy import no_library_attention
from autograder.chapters.ch03_attention.checks.properties import (
    expect_uses_weights,
    matches_reference,
    module_side_effects,
    on_drawn_sizes,
    permutation_equivariance,
    row_sums,
)
from autograder.chapters.ch03_attention.checks.spec import BookCall, ModuleSpec, load_grader_weights, load_weights, named_weights, require
from autograder.chapters.ch03_attention.checks.structure import linear_structure, seen
from autograder.chapters.ch03_attention.examples import Sizes, attention_sizes
from autograder.chapters.ch03_attention.programs import Program
from autograder.chapters.ch03_attention.reference import QKV, linear
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import FLOAT32, close, expect_close
from autograder.core.failures import Hint
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import EXAMPLES, variation_seed

# manual_seed(123); SelfAttention_v1(3, 2)(INPUTS)
SELF_ATTENTION_V1 = torch.tensor([
    [0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
    [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040],
])
# manual_seed(789); SelfAttention_v2(3, 2)(INPUTS)
SELF_ATTENTION_V2 = torch.tensor([
    [-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
    [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693],
])


def self_attention_v1_steps(state, x, context_length, num_heads):
    queries = x @ state["W_query"]
    keys = x @ state["W_key"]
    values = x @ state["W_value"]
    scores = queries @ keys.T
    scaled = scores / keys.shape[-1] ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ values
    return context


def self_attention_v2_steps(state, x, context_length, num_heads):
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    scores = queries @ keys.T
    scaled = scores / keys.shape[-1] ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ values
    return context


_SCALE_AS_POWER = "scaled = scores * keys.shape[-1] ** -0.5"

ERROR_HINTS = [
    (r"permute\(\): duplicate dims|permute.*does not match the length", "permute lists every axis once, in the "
     "new order: the keys' transpose for the scores is keys.T, keys.transpose(0, 1) or keys.permute(1, 0)"),
    (SHAPE_ERROR, Hint("x is (num_tokens, d_in): queries, keys and values are (num_tokens, d_out), the scores "
                       "(num_tokens, num_tokens); v1 multiplies x @ W (W of shape (d_in, d_out))", "the scores are queries @ keys.T")),
]

BOOK_SIZES = Sizes(batch=1, tokens=6, d_in=3, d_out=2, context_length=6, num_heads=1, seed=0)

V2 = ModuleSpec(
    name="SelfAttention_v2", book=BookCall(BOOK_SIZES, (3, 2), 789), batched=False, causal=False,
    args=lambda s: (s.d_in, s.d_out), reference=lambda state, x, s, mistake: R.attention(state, x, mistake, causal=False),
    program=Program(self_attention_v2_steps, (_SCALE_AS_POWER,)),
    mistakes=R.mistakes_for(causal=False), value_heads=lambda s: ["W_value"],
    shape_hint="x is (num_tokens, d_in) and the output (num_tokens, d_out)")
V1 = replace(
    V2, name="SelfAttention_v1", book=BookCall(BOOK_SIZES, (3, 2), 123), v1_style=True,
    reference=lambda state, x, s, mistake: R.attention(state, x, mistake, causal=False, v1=True),
    program=Program(self_attention_v1_steps, (_SCALE_AS_POWER,)),
    structure_hint=Hint("SelfAttention_v1 holds plain (d_in, d_out) parameter matrices W_query, W_key, W_value, used "
                        "as x @ W_query", "nn.Parameter(torch.rand(d_in, d_out))"))
ATTENTION_HINT = Hint("compare each step with the book: scores of queries and keys, scaled by 1/sqrt(d_k), softmax "
                      "over each row, weights times values",
                      "softmax(queries @ keys.T / sqrt(d_k), dim=-1) @ values, with d_k = keys.shape[-1]")


@check("3.1", 3, "book example: manual_seed(123); SelfAttention_v1(3, 2)(inputs)")
def v1_book(sub):
    require(sub, V1.name, "class")
    expect_book(V1, sub, SELF_ATTENTION_V1,
                weights_hint=Hint("the attention is right but the weights are not the book's: create W_query, W_key, "
                                  "W_value in this order, each a random (d_in, d_out) parameter", "nn.Parameter(torch.rand(d_in, d_out))"),
                default_hint=ATTENTION_HINT)


@check("3.2", 3, "book example: manual_seed(789); SelfAttention_v2(3, 2)(inputs)")
def v2_book(sub):
    require(sub, V2.name, "class")
    expect_book(V2, sub, SELF_ATTENTION_V2,
                weights_hint=Hint("the attention is right but the weights are not the book's: create W_query, W_key, "
                                  "W_value in this order, each an nn.Linear from d_in to d_out with a bias only when "
                                  "qkv_bias is True", "nn.Linear(d_in, d_out, bias=qkv_bias)"),
                default_hint=ATTENTION_HINT)


@check("3.3", 2, "weights: v1 holds (d_in, d_out) parameters, v2 nn.Linear layers honouring qkv_bias")
def structure(sub):
    require(sub, "SelfAttention_v1", "class")
    v1 = sub.build("SelfAttention_v1", 4, 3, seed=0)
    for name in QKV:
        if v1.info["params"].get(name) != [4, 3]:
            found = v1.info["params"].get(name) or ("an nn.Linear" if f"{name}.weight" in v1.info["params"]
                                                    else "missing")
            message = f"SelfAttention_v1(4, 3).{name} should be a parameter of shape [4, 3]; found {found}"
            if found == [3, 4]:
                raise seen(message, f"{name} is (d_out, d_in), the sizes swapped: v1 computes x @ {name}, so create "
                           "it as a (d_in, d_out) parameter", "nn.Parameter(torch.rand(d_in, d_out))", "v1_weights_transposed")
            raise seen(message, f"{name} must be a (d_in, d_out) parameter", f"self.{name} = nn.Parameter(torch.rand(d_in, d_out))")
    require(sub, "SelfAttention_v2", "class")
    linear_structure(sub.build("SelfAttention_v2", 4, 3, seed=0).info, QKV, [3, 4], bias=False)
    linear_structure(sub.build("SelfAttention_v2", 4, 3, qkv_bias=True, seed=0).info, QKV, [3, 4], bias=True)
    expect_uses_weights(V1, sub)
    expect_uses_weights(V2, sub)


@check("3.4", 2, "exercise: SelfAttention_v2's weights copied into SelfAttention_v1 give the same output")
def weight_transfer(sub):
    require(sub, "SelfAttention_v1", "class")
    require(sub, "SelfAttention_v2", "class")
    v2 = sub.build("SelfAttention_v2", 3, 2, seed=789)
    v1 = sub.build("SelfAttention_v1", 3, 2, seed=123)
    state = load_grader_weights(v2, variation_seed())
    x = book.INPUTS
    with named_weights(V2, state):
        expected = R.attention(state, x, causal=False)
        # nn.Linear stores weight as (d_out, d_in) and computes x @ weight.T
        transposed = {name: state[f"{name}.weight"].T.contiguous() for name in QKV}
    # the exercise needs a right v2 first: a wrong v2 is named as such, never v1
    out_v2 = v2(x)
    if not close(out_v2, expected, FLOAT32):
        hint = diagnose_module(V2, out_v2, state, x, BOOK_SIZES) or ATTENTION_HINT
        expect_close(out_v2, expected, "SelfAttention_v2(3, 2) (whose weights v1 receives)", hint=hint)
    load_weights(V1, v1, transposed)
    out_v1 = v1(x)
    hint = "SelfAttention_v1 must compute x @ W_query (W of shape (d_in, d_out)), so that W = linear.weight.T " \
           "gives the same result as the nn.Linear layer"
    if not close(out_v1, expected, FLOAT32):
        hint = diagnose_module(V1, out_v1, transposed, x, BOOK_SIZES) or hint
    expect_close(out_v1, expected, "SelfAttention_v1 with v2's transposed weights", hint=hint)


@check("3.5", 2, "equals scaled dot-product attention on its own weights (random sizes)")
def oracle(sub):
    for spec in (V1, V2):
        on_drawn_sizes(spec, sub, matches_reference, attention_sizes(), examples=EXAMPLES["module"])


@check("3.6", 2, "each token's weights sum to 1; permuting tokens permutes the output")
def properties(sub):
    for spec in (V1, V2):
        on_drawn_sizes(spec, sub, row_sums, attention_sizes(), examples=EXAMPLES["cheap_module"] // 3, shown=False)
        on_drawn_sizes(spec, sub, permutation_equivariance, attention_sizes(min_tokens=2),
                       examples=EXAMPLES["cheap_module"] // 3)


@check("3.7", 1, "forward leaves its input unchanged; two calls give the same output")
def side_effects(sub):
    for spec in (V1, V2):
        require(sub, spec.name, "class")
        module_side_effects(spec, sub)


STAGE = StageParts(
    Stage(3, "self_attention", "Self-attention with trainable weights", ("SelfAttention_v1", "SelfAttention_v2")),
    error_hints=ERROR_HINTS,
    call_policy=no_library_attention((lambda sub: sub.build(V1.name, 3, 2, seed=0), (4, 3)),
                                     (lambda sub: sub.build(V2.name, 3, 2, seed=0), (4, 3))),
    # the checks that build SelfAttention_v1; the others build SelfAttention_v2
    exhibit=exhibits.attention_weights(V2, {"3.1": V1, "3.3": V1, "3.4": V1}),
)
