"""Stage 5 (wrapper): MultiHeadAttentionWrapper stacks num_heads CausalAttention heads."""

import math

import torch

from autograder.chapters.ch03_attention import book
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.common import (
    ModuleSpec,
    batch_independence,
    causality,
    expect_book,
    expect_reference,
    meta_device,
    positions,
    require,
)
from autograder.core.checks import check
from autograder.core.failures import CheckFailure
from autograder.core.strategies import EXAMPLES, Sizes, attention_sizes, run_property

NAME = "MultiHeadAttentionWrapper"

SPEC = ModuleSpec(
    name=NAME, batched=True, causal=True,
    args=lambda s: (s.d_in, s.head_dim, s.context_length, 0.0, s.num_heads),
    reference=lambda state, x, s, mistake: R.wrapper(state, x, s.num_heads, mistake),
    mistakes={**{m: R.ATTENTION_MISTAKES[m] for m in R.mistakes_for(causal=True)}, **R.WRAPPER_MISTAKES},
    out_dim=lambda s: s.d_out, value_heads=lambda s: [f"heads.{i}.W_value" for i in range(s.num_heads)],
    dropout_index=3, heads=lambda s: s.num_heads,
    structure_hint=lambda missing, present: _heads_hint(missing, present),
    shape_hint="the output is (batch, num_tokens, num_heads * d_out): concatenate the heads' outputs "
               "along the last dimension, torch.cat([head(x) for head in self.heads], dim=-1)")
def _heads_hint(missing: str, present: set) -> str:
    if missing.startswith("heads.") and any(name.startswith("heads.0.") for name in present):
        # named_parameters() lists a module once however often the ModuleList repeats it
        return ("the heads share one set of weights: create a new CausalAttention for each head, in a loop "
                "([CausalAttention(...)] * num_heads repeats one head)")
    return ("self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) "
            "for _ in range(num_heads)])")


CONCAT_HINT = ("build the heads in order and concatenate their outputs along the last dimension: "
               "torch.cat([head(x) for head in self.heads], dim=-1)")
WEIGHTS_HINT = ("each head is right but the weights are not the book's: create the heads one after "
                "the other in __init__, before anything else random")


@check("5.1", 2, "book example: manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)")
def book_example(sub):
    require(sub, NAME, "class")
    expect_book(SPEC, sub.build(NAME, 3, 2, 6, 0.0, num_heads=2, seed=123), book.BATCH,
                torch.stack((book.WRAPPER, book.WRAPPER)),
                Sizes(batch=2, tokens=6, d_in=3, d_out=4, context_length=6, num_heads=2, seed=0),
                weights_hint=WEIGHTS_HINT, default_hint=CONCAT_HINT)


@check("5.2", 1, "exercise: d_out=1 makes the two-head output 2-dimensional")
def exercise(sub):
    require(sub, NAME, "class")
    expect_book(SPEC, sub.build(NAME, 3, 1, 6, 0.0, num_heads=2, seed=123), book.BATCH,
                torch.stack((book.WRAPPER_D_OUT_1, book.WRAPPER_D_OUT_1)),
                Sizes(batch=2, tokens=6, d_in=3, d_out=2, context_length=6, num_heads=2, seed=0),
                weights_hint=WEIGHTS_HINT, default_hint="the output has num_heads * d_out columns")


@check("5.3", 2, "structure: `heads` is an nn.ModuleList of num_heads CausalAttention modules")
def structure(sub):
    require(sub, NAME, "class")
    info = sub.build(NAME, 4, 2, 5, 0.0, num_heads=3, seed=0).info
    container = info["module_containers"].get("heads")
    if container:
        raise CheckFailure(f"`heads` is a plain Python {container}, so its weights are not registered",
                           "use nn.ModuleList([...]) so .parameters(), .to() and .eval() reach every head")
    if info["modules"].get("heads", {}).get("class") != "ModuleList":
        raise CheckFailure("no nn.ModuleList named `heads`",
                           "self.heads = nn.ModuleList([CausalAttention(...) for _ in range(num_heads)])")
    heads = [n for n in info["modules"] if n.count(".") == 1 and n.startswith("heads.")]
    if len(heads) != 3:
        # named_modules() lists a module once however often it is repeated
        raise CheckFailure(f"num_heads=3 gave {len(heads)} distinct head{'s' * (len(heads) != 1)}",
                           "create a new CausalAttention for each head, in a loop "
                           "([CausalAttention(...)] * num_heads repeats one head, with the same weights)")
    for name in heads:
        if info["modules"][name]["class"] != "CausalAttention":
            raise CheckFailure(f"`{name}` is a {info['modules'][name]['class']}, expected CausalAttention",
                               "reuse your CausalAttention class for each head")
        if info["params"].get(f"{name}.W_query.weight") != [2, 4]:
            raise CheckFailure(f"`{name}.W_query.weight` has shape {info['params'].get(f'{name}.W_query.weight')}, "
                               "expected [2, 4]", "each head is CausalAttention(d_in, d_out, ...)")
    # the wrapper hands its dropout and qkv_bias on to every head
    info = sub.build(NAME, 4, 2, 5, 0.25, num_heads=2, qkv_bias=True, seed=0).info
    for name in ("heads.0", "heads.1"):
        p = info["modules"].get(f"{name}.dropout", {}).get("p")
        bias = info["modules"].get(f"{name}.W_query", {}).get("bias")
        if p is None or not math.isclose(p, 0.25) or not bias:
            raise CheckFailure(f"MultiHeadAttentionWrapper(..., dropout=0.25, qkv_bias=True) built a head with "
                               f"dropout {p} and {'a' if bias else 'no'} bias",
                               "pass dropout and qkv_bias on to every head: CausalAttention(d_in, d_out, "
                               "context_length, dropout, qkv_bias)")


@check("5.4", 3, "head i fills columns [i*d_out, (i+1)*d_out) and equals causal attention on its weights")
def oracle(sub):
    require(sub, NAME, "class")

    def body(sizes):
        module = SPEC.build(sub, sizes)
        x = SPEC.input(sizes)
        expect_reference(SPEC, module(x), module.state(), x, sizes, f"{module.what}(x)",
                         "concatenate the heads in order along the last dimension")

    run_property(body, attention_sizes(heads=True), examples=EXAMPLES["module"], show_input=SPEC.input)


@check("5.5", 1, "causality and batch independence")
def causal_and_batch(sub):
    require(sub, NAME, "class")
    run_property(lambda sizes, t: causality(SPEC, sub, sizes, t), attention_sizes(heads=True, min_tokens=2),
                 positions, examples=EXAMPLES["module"] // 2, show_input=SPEC.input)
    run_property(lambda sizes: batch_independence(SPEC, sub, sizes), attention_sizes(heads=True, min_batch=2),
                 examples=EXAMPLES["module"] // 2, show_input=SPEC.input)


@check("5.6", 1, "moves to another device with .to() (every head's mask moves too)")
def device(sub):
    require(sub, NAME, "class")
    run_property(lambda sizes: meta_device(SPEC, sub, sizes), attention_sizes(heads=True), examples=2)
