"""Stage 3 (self_attention): SelfAttention_v1 (nn.Parameter) and SelfAttention_v2 (nn.Linear)."""

from autograder import book, reference as R
from autograder.checks import check
from autograder.checks.common import (
    ModuleSpec, expect_reference, linear_structure, permutation_equivariance, require, row_sums,
)
from autograder.compare import BOOK, expect_close
from autograder.failures import CheckFailure
from autograder.strategies import EXAMPLES, Sizes, attention_sizes, run_property

ID = "self_attention"
QKV = ["W_query", "W_key", "W_value"]
_MISTAKES = {m: R.ATTENTION_MISTAKES[m] for m in R.mistakes_for(causal=False)}

V1 = ModuleSpec(
    name="SelfAttention_v1", batched=False, causal=False, args=lambda s: (s.d_in, s.d_out),
    reference=lambda state, x, s, mistake: R.self_attention_v1(state, x, mistake),
    mistakes=_MISTAKES, out_dim=lambda s: s.d_out, value_heads=lambda s: ["W_value"], v1_style=True)
V2 = ModuleSpec(
    name="SelfAttention_v2", batched=False, causal=False, args=lambda s: (s.d_in, s.d_out),
    reference=lambda state, x, s, mistake: R.self_attention_v2(state, x, mistake),
    mistakes=_MISTAKES, out_dim=lambda s: s.d_out, value_heads=lambda s: ["W_value"])
BOOK_SIZES = Sizes(batch=1, tokens=6, d_in=3, d_out=2, context_length=6, num_heads=1, seed=0)


@check(ID, 3, "book example: manual_seed(123); SelfAttention_v1(3, 2)(inputs)")
def v1_book(sub):
    require(sub, "SelfAttention_v1", "class")
    module = sub.build("SelfAttention_v1", 3, 2, seed=123)
    expect_close(module(book.INPUTS), book.SELF_ATTENTION_V1, f"{module.what}(inputs)", tol=BOOK,
                 hint="create W_query, W_key, W_value in this order as nn.Parameter(torch.rand(d_in, d_out)), "
                      "then softmax(queries @ keys.T / sqrt(d_out), dim=-1) @ values")


@check(ID, 3, "book example: manual_seed(789); SelfAttention_v2(3, 2)(inputs)")
def v2_book(sub):
    require(sub, "SelfAttention_v2", "class")
    module = sub.build("SelfAttention_v2", 3, 2, seed=789)
    expect_close(module(book.INPUTS), book.SELF_ATTENTION_V2, f"{module.what}(inputs)", tol=BOOK,
                 hint="create W_query, W_key, W_value in this order as nn.Linear(d_in, d_out, bias=qkv_bias)")


@check(ID, 2, "weights: v1 holds (d_in, d_out) parameters, v2 nn.Linear layers honouring qkv_bias")
def structure(sub):
    require(sub, "SelfAttention_v1", "class")
    v1 = sub.build("SelfAttention_v1", 4, 3, seed=0)
    for name in QKV:
        if v1.info["params"].get(name) != [4, 3]:
            found = v1.info["params"].get(name) or ("an nn.Linear" if f"{name}.weight" in v1.info["params"]
                                                    else "missing")
            raise CheckFailure(f"SelfAttention_v1(4, 3).{name} should be a parameter of shape [4, 3]; found {found}",
                               f"self.{name} = nn.Parameter(torch.rand(d_in, d_out))")
    require(sub, "SelfAttention_v2", "class")
    linear_structure(sub.build("SelfAttention_v2", 4, 3, seed=0).info, QKV, [3, 4], bias=False)
    linear_structure(sub.build("SelfAttention_v2", 4, 3, qkv_bias=True, seed=0).info, QKV, [3, 4], bias=True)


@check(ID, 2, "exercise: SelfAttention_v2's weights copied into SelfAttention_v1 give the same output")
def weight_transfer(sub):
    require(sub, "SelfAttention_v1", "class")
    require(sub, "SelfAttention_v2", "class")
    v2 = sub.build("SelfAttention_v2", 3, 2, seed=789)
    v1 = sub.build("SelfAttention_v1", 3, 2, seed=123)
    state = v2.state()
    # nn.Linear stores weight as (d_out, d_in) and computes x @ weight.T
    v1.load({name: state[f"{name}.weight"].T.contiguous() for name in QKV})
    expect_close(v1(book.INPUTS), v2(book.INPUTS), "SelfAttention_v1 with v2's transposed weights",
                 hint="SelfAttention_v1 must compute x @ W_query (W of shape (d_in, d_out)), so that "
                      "W = linear.weight.T gives the same result as the nn.Linear layer")
    expect_close(v1(book.INPUTS), book.SELF_ATTENTION_V2, "SelfAttention_v1 with v2's weights", tol=BOOK)


@check(ID, 3, "equals scaled dot-product attention on its own weights (random sizes)")
def oracle(sub):
    for spec in (V1, V2):
        require(sub, spec.name, "class")

        def body(sizes, spec=spec):
            module = spec.build(sub, sizes)
            x = spec.input(sizes)
            expect_reference(spec, module(x), module.state(), x, sizes, f"[{sizes}] {module.what}(x)")

        run_property(body, attention_sizes(), examples=EXAMPLES["module"])


@check(ID, 2, "each token's weights sum to 1; permuting tokens permutes the output")
def properties(sub):
    for spec in (V1, V2):
        require(sub, spec.name, "class")
        run_property(lambda sizes, spec=spec: row_sums(spec, sub, sizes), attention_sizes(),
                     examples=EXAMPLES["cheap_module"] // 3)
        run_property(lambda sizes, spec=spec: permutation_equivariance(spec, sub, sizes),
                     attention_sizes(min_tokens=2), examples=EXAMPLES["cheap_module"] // 3)
