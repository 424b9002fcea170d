"""Stage 6 (mha): MultiHeadAttention with weight splits (view + transpose) and out_proj."""

import torch

from autograder.chapters.ch03_attention import exhibits
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.diagnosis import diagnose_module, expect_book, expect_reference, nan_hint
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
from autograder.chapters.ch03_attention.checks.s4_causal import BUFFER_NAME
from autograder.chapters.ch03_attention.checks.spec import BookCall, ModuleSpec, load_grader_weights, load_weights, named_weights, require
from autograder.chapters.ch03_attention.checks.structure import dropout_structure, linear_structure, mask_structure, out_proj_structure
from autograder.chapters.ch03_attention.examples import Sizes, attention_sizes
from autograder.chapters.ch03_attention.programs import MASKS, Program
from autograder.chapters.ch03_attention.reference import QKV, linear
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import FLOAT32, close, expect_close, expect_shape
from autograder.core.failures import CheckFailure, Hint, StudentCodeError
from autograder.core.hints import NEGATIVE_SIZE, SHAPE_ERROR
from autograder.core.strategies import EXAMPLES, run_property, tensor

NAME = "MultiHeadAttention"

# manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(BATCH)[0]
MHA = torch.tensor([
    [0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
    [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028],
])


def multi_head_attention_steps(state, x, context_length, num_heads):
    b, num_tokens, d_in = x.shape
    queries = linear(state, "W_query", x)
    keys = linear(state, "W_key", x)
    values = linear(state, "W_value", x)
    d_out = queries.shape[-1]
    head_dim = d_out // num_heads
    q_heads = queries.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    k_heads = keys.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    v_heads = values.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    scores = q_heads @ k_heads.transpose(2, 3)
    masked = scores.masked_fill(torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
                                [:num_tokens, :num_tokens], -torch.inf)
    scaled = masked / head_dim ** 0.5
    weights = torch.softmax(scaled, dim=-1)
    context = weights @ v_heads
    merged = context.transpose(1, 2).contiguous().view(b, num_tokens, d_out)
    projected = linear(state, "out_proj", merged)
    return projected


ERROR_HINTS = [
    (r"permute\(\): duplicate dims|permute.*does not match the length", "permute lists every axis once, in the "
     "new order: splitting the heads, (b, num_tokens, num_heads, head_dim).permute(0, 2, 1, 3) moves the heads "
     "before the tokens, the keys' transpose swaps the last two axes, and the merge moves the heads back"),
    (r"unflatten: Provided sizes", "unflatten splits one axis into the sizes given: the heads come from the last "
     "axis, .unflatten(-1, (num_heads, head_dim)), and a (b * num_heads) axis from axis 0, .unflatten(0, (b, "
     "num_heads))"),
    BUFFER_NAME,
    (r"(?i)(ValueError|AssertionError).*divisib", "the divisibility check refused sizes that divide evenly "
     "(every size the grader builds with, outside check 6.3, is a d_out that num_heads divides): raise only "
     "when num_heads does not divide d_out"),
    (NEGATIVE_SIZE, "a view or reshape was asked for a negative size (the error gives the shape and the axis): "
     "the split into heads asks for four sizes, the batch, the tokens, num_heads and head_dim (d_out shared among the heads), "
     "and the merge for three, the batch, the tokens and d_out, each a positive size read from x or the module"),
    (SHAPE_ERROR, Hint("follow the shapes: the heads split to (b, num_heads, num_tokens, head_dim), the keys' last "
                       "two axes swapped for the scores, the mask sliced to num_tokens, the heads merged back to (b, "
                       "num_tokens, d_out)",
                       ".view(b, num_tokens, num_heads, head_dim).transpose(1, 2), keys.transpose(2, 3), "
                       "[:num_tokens, :num_tokens], .transpose(1, 2).contiguous().view(b, num_tokens, d_out)")),
    (r"^AssertionError", Hint("an assert refused sizes that divide evenly: the one check MultiHeadAttention needs is "
                              "that d_out is divisible by num_heads", "assert d_out % num_heads == 0")),
]

# the multi-head mistakes first: at small sizes scaling by d_out can look like another axis of the keys
MISTAKES = {**R.MHA_MISTAKES, **R.mistakes_for(causal=True)}

SPEC = ModuleSpec(
    name=NAME, book=BookCall(Sizes(2, 6, 3, 2, 6, 2, 0), (3, 2, 6, 0.0), 123, num_heads=2), batched=True, causal=True,
    args=lambda s: (s.d_in, s.d_out, s.context_length, 0.0, s.num_heads),
    reference=lambda state, x, s, mistake: R.multi_head(state, x, s.num_heads, mistake),
    program=Program(multi_head_attention_steps, ("scaled = masked * head_dim ** -0.5", *MASKS),
                    ("masked", "scaled")),
    mistakes=MISTAKES, value_heads=lambda s: ["W_value"], identity_out_proj=True, multi_head=True,
    structure_hint=Hint("create W_query, W_key, W_value as nn.Linear layers from d_in to d_out and out_proj from "
                        "d_out to d_out, with its bias",
                        "W_query = nn.Linear(d_in, d_out, bias=qkv_bias), ..., out_proj = nn.Linear(d_out, d_out)"),
    shape_hint=Hint("the output is (batch, num_tokens, d_out): merge the heads back into d_out features, then "
                    "out_proj", ".transpose(1, 2).contiguous().view(b, num_tokens, d_out)"))


@check("6.1", 3, "book example: manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(batch)")
def book_example(sub):
    require(sub, NAME, "class")
    expect_book(SPEC, sub, torch.stack((MHA, MHA)),
                weights_hint=Hint("the attention is right but the weights are not the book's: create W_query, W_key, "
                                  "W_value, then out_proj (with its bias), in this order, before anything else random",
                                  "out_proj = nn.Linear(d_out, d_out)"),
                default_hint=Hint("split into heads (the head axis before the tokens), attend per head with scale "
                                  "1/sqrt(head_dim), merge back and apply out_proj",
                                  ".view(b, num_tokens, num_heads, head_dim).transpose(1, 2) splits the heads"))


@check("6.2", 2, "structure: nn.Linear weights, out_proj with bias, nn.Dropout, mask buffer")
def structure(sub):
    require(sub, NAME, "class")
    info = sub.build(NAME, 5, 6, 7, 0.25, num_heads=3, seed=0).info
    linear_structure(info, QKV, [6, 5], bias=False)
    out_proj_structure(info, 6)
    dropout_structure(info, 0.25)
    mask_structure(info, 7)
    linear_structure(sub.build(NAME, 5, 6, 7, 0.0, num_heads=3, qkv_bias=True, seed=0).info, QKV, [6, 5],
                     bias=True)
    expect_uses_weights(SPEC, sub)


@check("6.3", 1, "d_out not divisible by num_heads raises AssertionError or ValueError")
def invalid_heads(sub):
    require(sub, NAME, "class")
    try:
        sub.build(NAME, 4, 5, 6, 0.0, num_heads=2, seed=0)
    except StudentCodeError as error:
        if error.exc_type in ("AssertionError", "ValueError"):
            expect_uses_weights(SPEC, sub)  # and accepts valid sizes with a real forward pass
            return
        raise CheckFailure(f"MultiHeadAttention(4, 5, 6, 0.0, num_heads=2) raised {error.exc_type}, "
                           "expected AssertionError or ValueError",
                           Hint("check the sizes first, refusing a d_out that num_heads does not divide, with an "
                                "assert or a ValueError",
                                "assert d_out % num_heads == 0, \"d_out must be divisible by num_heads\"")) from None
    raise CheckFailure("MultiHeadAttention(4, 5, 6, 0.0, num_heads=2) was accepted, but 5 output "
                       "dimensions cannot be split into 2 heads",
                       Hint("refuse a d_out that num_heads does not divide, with an assert or a ValueError",
                            "assert d_out % num_heads == 0, \"d_out must be divisible by num_heads\""))


@check("6.4", 3, "equals multi-head causal attention on its own weights (random sizes and head counts)")
def oracle(sub):
    on_drawn_sizes(SPEC, sub, matches_reference, attention_sizes(heads=True), examples=EXAMPLES["module"])


@check("6.5", 3, "equals the wrapper of independent heads when its weights are stacked from theirs")
def equals_wrapper(sub):
    """Splitting one projection into heads equals separate heads whose weights it stacks."""
    require(sub, NAME, "class")

    def body(sizes):
        module = SPEC.build(sub, sizes)
        heads = [{f"{n}.weight": tensor((sizes.head_dim, sizes.d_in), sizes.seed + 10 * h + j) for j, n in enumerate(QKV)}
                 for h in range(sizes.num_heads)]
        stacked = {f"{n}.weight": torch.cat([head[f"{n}.weight"] for head in heads], 0) for n in QKV}
        stacked["out_proj.weight"] = torch.eye(sizes.d_out)
        stacked["out_proj.bias"] = torch.zeros(sizes.d_out)
        load_weights(SPEC, module, stacked)
        x = SPEC.input(sizes)
        out = module(x)
        expected = torch.cat([R.attention(head, x) for head in heads], -1)
        what = f"{module.what}(x) with stacked head weights and out_proj = identity"
        expect_shape(out, expected.shape, what, SPEC.shape_hint)
        hint = ""
        if not close(out, expected, FLOAT32):  # the known mistakes' outputs only explain a failure
            hint = diagnose_module(SPEC, out, stacked, x, sizes, sub) or nan_hint(out, expected) or (
                Hint("head h must use rows h*head_dim:(h+1)*head_dim of each projection",
                     ".view(b, num_tokens, num_heads, head_dim).transpose(1, 2)"))
        expect_close(out, expected, what, hint=hint)

    run_property(body, attention_sizes(heads=True), examples=EXAMPLES["module"], show_input=SPEC.input)


@check("6.6", 2, "causality: changing future tokens never changes earlier outputs")
def future_tokens(sub):
    on_drawn_sizes(SPEC, sub, causality, attention_sizes(heads=True, min_tokens=2), positions, examples=EXAMPLES["module"])


@check("6.7", 1, "each head's weights sum to 1; sequences in a batch are independent")
def rows_and_batch(sub):
    on_drawn_sizes(SPEC, sub, row_sums, attention_sizes(heads=True), examples=EXAMPLES["module"] // 2, shown=False)
    on_drawn_sizes(SPEC, sub, batch_independence, attention_sizes(heads=True, min_batch=2), examples=EXAMPLES["module"] // 2)


@check("6.8", 2, "dropout: off in eval mode, on each head's attention weights in training mode")
def dropout(sub):
    on_drawn_sizes(SPEC, sub, dropout_behaviour, attention_sizes(heads=True, min_batch=2, min_tokens=2, min_head_dim=2),
                   examples=3)


@check("6.9", 1, "scores scaled by 1/sqrt(head_dim), with large scores where the scale matters")
def scale(sub):
    require(sub, NAME, "class")

    def body(sizes):
        module = SPEC.build(sub, sizes)
        state = load_grader_weights(module, sizes.seed)
        with named_weights(SPEC, state):
            state = {**state, "W_query.weight": state["W_query.weight"] * 6}
        load_weights(SPEC, module, state)
        x = SPEC.input(sizes)
        expect_reference(SPEC, module(x), state, x, sizes, f"{module.what}(x) with large scores",
                         Hint("divide the scores by sqrt(head_dim), the keys' last axis", "keys.shape[-1] ** 0.5"), sub=sub)

    run_property(body, attention_sizes(heads=True), examples=4, show_input=SPEC.input)


@check("6.10", 1, "gradients reach every weight; moves to another device with .to()")
def grads_and_device(sub):
    on_drawn_sizes(SPEC, sub, lambda *drawn: gradients(*drawn, [f"{n}.weight" for n in [*QKV, "out_proj"]]),
                   attention_sizes(heads=True), examples=3)
    on_drawn_sizes(SPEC, sub, moves_to_device, attention_sizes(heads=True), examples=2, shown=False)


@check("6.11", 1, "forward leaves its input and the mask buffer unchanged; two calls give the same output")
def side_effects(sub):
    require(sub, NAME, "class")
    module_side_effects(SPEC, sub)


STAGE = StageParts(
    Stage(6, "mha", "Multi-head attention with weight splits", ("MultiHeadAttention",)),
    error_hints=ERROR_HINTS,
    call_policy=no_library_attention((lambda sub: sub.build(NAME, 3, 4, 6, 0.0, num_heads=2, seed=0), (2, 4, 3))),
    exhibit=exhibits.attention_weights(SPEC),
)
