"""Stage 5 (wrapper): MultiHeadAttentionWrapper stacks num_heads CausalAttention heads."""

from autograder import book, reference as R
from autograder.checks import check
from autograder.checks.common import (
    ModuleSpec, batch_independence, causality, expect_reference, meta_device, positions, require,
)
from autograder.compare import BOOK, expect_close
from autograder.failures import CheckFailure
from autograder.strategies import EXAMPLES, attention_sizes, run_property

ID = "wrapper"
NAME = "MultiHeadAttentionWrapper"

SPEC = ModuleSpec(
    name=NAME, batched=True, causal=True,
    args=lambda s: (s.d_in, s.head_dim, s.context_length, 0.0, s.num_heads),
    reference=lambda state, x, s, mistake: R.wrapper(state, x, s.num_heads, mistake),
    mistakes={m: R.ATTENTION_MISTAKES[m] for m in R.mistakes_for(causal=True)},
    out_dim=lambda s: s.d_out, value_heads=lambda s: [f"heads.{i}.W_value" for i in range(s.num_heads)],
    dropout_index=3, heads=lambda s: s.num_heads)


@check(ID, 2, "book example: manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)")
def book_example(sub):
    require(sub, NAME, "class")
    module = sub.build(NAME, 3, 2, 6, 0.0, num_heads=2, seed=123)
    expect_close(module(book.BATCH)[0], book.WRAPPER, f"{module.what}(batch)[0]", tol=BOOK,
                 hint="build the heads in order and concatenate their outputs along the last "
                      "dimension: torch.cat([head(x) for head in self.heads], dim=-1)")


@check(ID, 1, "exercise: d_out=1 makes the two-head output 2-dimensional")
def exercise(sub):
    require(sub, NAME, "class")
    module = sub.build(NAME, 3, 1, 6, 0.0, num_heads=2, seed=123)
    expect_close(module(book.BATCH)[0], book.WRAPPER_D_OUT_1, f"{module.what}(batch)[0]", tol=BOOK,
                 hint="the output has num_heads * d_out columns")


@check(ID, 2, "structure: `heads` is an nn.ModuleList of num_heads CausalAttention modules")
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
        raise CheckFailure(f"num_heads=3 gave {len(heads)} heads", "one CausalAttention per head")
    for name in heads:
        if info["modules"][name]["class"] != "CausalAttention":
            raise CheckFailure(f"`{name}` is a {info['modules'][name]['class']}, expected CausalAttention",
                               "reuse your CausalAttention class for each head")
        if info["params"].get(f"{name}.W_query.weight") != [2, 4]:
            raise CheckFailure(f"`{name}.W_query.weight` has shape {info['params'].get(f'{name}.W_query.weight')}, "
                               "expected [2, 4]", "each head is CausalAttention(d_in, d_out, ...)")


@check(ID, 3, "head i fills columns [i*d_out, (i+1)*d_out) and equals causal attention on its weights")
def oracle(sub):
    require(sub, NAME, "class")

    def body(sizes):
        module = SPEC.build(sub, sizes)
        x = SPEC.input(sizes)
        expect_reference(SPEC, module(x), module.state(), x, sizes, f"[{sizes}] {module.what}(x)",
                         "concatenate the heads in order along the last dimension")

    run_property(body, attention_sizes(heads=True), examples=EXAMPLES["module"])


@check(ID, 1, "causality and batch independence")
def causal_and_batch(sub):
    require(sub, NAME, "class")
    run_property(lambda sizes, t: causality(SPEC, sub, sizes, t), attention_sizes(heads=True, min_tokens=2),
                 positions, examples=EXAMPLES["module"] // 2)
    run_property(lambda sizes: batch_independence(SPEC, sub, sizes), attention_sizes(heads=True, min_batch=2),
                 examples=EXAMPLES["module"] // 2)


@check(ID, 1, "moves to another device with .to() (every head's mask moves too)")
def device(sub):
    require(sub, NAME, "class")
    run_property(lambda sizes: meta_device(SPEC, sub, sizes), attention_sizes(heads=True), examples=2)
