"""Stage 4 (causal): CausalAttention with a registered mask buffer and dropout on the weights."""

import torch

from autograder.chapters.ch03_attention import exhibits
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.diagnosis import expect_book
from autograder.chapters.ch03_attention.checks.policy import no_library_attention
from autograder.chapters.ch03_attention.checks.properties import (
    batch_independence,
    causality,
    dropout_behaviour,
    expect_uses_weights,
    gradients,
    matches_reference,
    module_side_effects,
    moves_to_device,
    on_drawn_sizes,
    positions,
    row_sums,
)
from autograder.chapters.ch03_attention.checks.spec import BookCall, ModuleSpec, require
from autograder.chapters.ch03_attention.checks.structure import dropout_structure, linear_structure, mask_structure
from autograder.chapters.ch03_attention.examples import Sizes, attention_sizes
from autograder.chapters.ch03_attention.programs import MASKS, Program
from autograder.chapters.ch03_attention.reference import QKV, linear
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.failures import Hint
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import EXAMPLES

# manual_seed(123); CausalAttention(3, 2, 6, 0.0)(BATCH)[0]
CAUSAL = torch.tensor([
    [-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
    [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081],
])


def causal_attention_steps(state, x, context_length, num_heads):
    b, num_tokens, d_in = x.shape
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    scores = queries @ keys.transpose(1, 2)
    masked = scores.masked_fill(torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
                                [:num_tokens, :num_tokens], -torch.inf)
    scaled = masked / keys.shape[-1] ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ values
    return context


BUFFER_NAME = (r"buffer name should be a string", Hint("register_buffer takes the buffer's name first, then the tensor",
               "self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))"))
ERROR_HINTS = [
    BUFFER_NAME,
    (SHAPE_ERROR, Hint("x is (batch, num_tokens, d_in): transpose only the keys' last two axes (keys.T reverses "
                       "the batch axis too) and slice the mask to the input's num_tokens", "keys.transpose(1, 2)")),
]

BOOK_SIZES = Sizes(batch=2, tokens=6, d_in=3, d_out=2, context_length=6, num_heads=1, seed=0)

SPEC = ModuleSpec(
    name="CausalAttention", book=BookCall(BOOK_SIZES, (3, 2, 6, 0.0), 123), batched=True, causal=True,
    args=lambda s: (s.d_in, s.d_out, s.context_length, 0.0),
    reference=lambda state, x, s, mistake: R.attention(state, x, mistake),
    program=Program(causal_attention_steps, ("scaled = masked * keys.shape[-1] ** -0.5", *MASKS),
                    ("masked", "scaled")),
    mistakes=R.mistakes_for(causal=True),
    value_heads=lambda s: ["W_value"],
    shape_hint="x is (batch, num_tokens, d_in) and the output (batch, num_tokens, d_out)")


@check("4.1", 3, "book example: manual_seed(123); CausalAttention(3, 2, 6, 0.0)(batch)")
def book_example(sub):
    require(sub, SPEC.name, "class")
    expect_book(SPEC, sub, torch.stack((CAUSAL, CAUSAL)),
                weights_hint=Hint("the attention is right but the weights are not the book's: create W_query, W_key, "
                                  "W_value in this order, before anything else random, with a bias only when qkv_bias is "
                                  "True", "each nn.Linear(d_in, d_out, bias=qkv_bias)"),
                default_hint=Hint("scores masked above the diagonal with -inf, a softmax over the keys of the scaled "
                                  "scores, then the weights times the values", "softmax(scores / sqrt(d_k), dim=-1) @ values"))


@check("4.2", 2, "structure: nn.Linear weights, nn.Dropout, mask registered as a (context_length, context_length) buffer")
def structure(sub):
    require(sub, SPEC.name, "class")
    info = sub.build(SPEC.name, 4, 3, 7, 0.25, seed=0).info
    linear_structure(info, QKV, [3, 4], bias=False)
    dropout_structure(info, 0.25)
    mask_structure(info, 7)
    linear_structure(sub.build(SPEC.name, 4, 3, 7, 0.0, qkv_bias=True, seed=0).info, QKV, [3, 4], bias=True)
    expect_uses_weights(SPEC, sub)


@check("4.3", 3, "equals causal scaled dot-product attention on its own weights, inputs shorter than the context")
def oracle(sub):
    on_drawn_sizes(SPEC, sub, matches_reference, attention_sizes(), examples=EXAMPLES["module"])


@check("4.4", 3, "causality: changing future tokens never changes earlier outputs")
def future_tokens(sub):
    on_drawn_sizes(SPEC, sub, causality, attention_sizes(min_tokens=2), positions, examples=EXAMPLES["module"])


@check("4.5", 2, "each token's weights sum to 1; sequences in a batch are independent")
def rows_and_batch(sub):
    on_drawn_sizes(SPEC, sub, row_sums, attention_sizes(), examples=EXAMPLES["module"] // 2, shown=False)
    on_drawn_sizes(SPEC, sub, batch_independence, attention_sizes(min_batch=2), examples=EXAMPLES["module"] // 2)


@check("4.6", 3, "dropout: off in eval mode, on the attention weights in training mode, rescaled by 1/(1-p)")
def dropout(sub):
    on_drawn_sizes(SPEC, sub, dropout_behaviour, attention_sizes(min_batch=2, min_tokens=2, min_head_dim=2), examples=3)


@check("4.7", 1, "moves to another device with .to() (mask is a buffer, no tensors created on the CPU)")
def device(sub):
    on_drawn_sizes(SPEC, sub, moves_to_device, attention_sizes(), examples=2, shown=False)


@check("4.8", 2, "gradients reach W_query, W_key and W_value")
def grads(sub):
    on_drawn_sizes(SPEC, sub, lambda *drawn: gradients(*drawn, [f"{n}.weight" for n in QKV]), attention_sizes(), examples=3)


@check("4.9", 1, "forward leaves its input and the mask buffer unchanged; two calls give the same output")
def side_effects(sub):
    require(sub, SPEC.name, "class")
    module_side_effects(SPEC, sub)


STAGE = StageParts(
    Stage(4, "causal", "Causal attention with dropout", ("CausalAttention",)),
    error_hints=ERROR_HINTS,
    call_policy=no_library_attention((lambda sub: sub.build(SPEC.name, 3, 2, 6, 0.0, seed=0), (2, 4, 3))),
    exhibit=exhibits.attention_weights(SPEC),
)
