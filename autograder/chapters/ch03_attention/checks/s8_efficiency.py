"""Stage 8 (efficiency), a bonus: ``softmax_stable``, ``FusedQKVAttention`` (one ``nn.Linear(d_in, 3 * d_out)``,
as GPT-2's ``c_attn``), ``attn_weights_bytes`` and ``SDPAMultiHeadAttention`` (PyTorch's fused attention)."""

import math
from dataclasses import replace
from itertools import permutations

import torch
from hypothesis import strategies as st

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks import s6_mha
from autograder.chapters.ch03_attention.checks.diagnosis import expect_function, expect_reference
from autograder.chapters.ch03_attention.checks.properties import dropout_behaviour, function_side_effects, module_side_effects
from autograder.chapters.ch03_attention.checks.spec import load_grader_weights, require
from autograder.chapters.ch03_attention.checks.structure import linear_structure, out_proj_structure
from autograder.chapters.ch03_attention.examples import attention_sizes
from autograder.chapters.ch03_attention.reference import QKV
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import EXACT, FLOAT32, close
from autograder.core.failures import CheckFailure, Hint
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import EXAMPLES, distinct_shape, float_arrays, run_property, tensor

SDPA = "torch.nn.functional.scaled_dot_product_attention"

# -- (a) a softmax that cannot overflow ---------------------------------------------------------


def _in_float32(fn):
    """A mistake computed in float32, where exp overflows above 88.7 (float64 only above 709)."""
    return lambda x: fn(x.float()).double()


def _shifted(x, shift):
    exp_x = (x - shift).exp()
    return exp_x / exp_x.sum(dim=-1, keepdim=True)


STABLE_MISTAKES: R.FunctionMistakes = {
    "no_shift": (_in_float32(lambda x: _shifted(x, 0.0)),
                 Hint("exp overflows: in float32 exp(x) is inf above x = 88.7, and inf / inf is NaN. Subtract each "
                      "row's maximum first", "x - x.max(dim=-1, keepdim=True).values")),
    "global_max": (_in_float32(lambda x: _shifted(x, x.max())),
                   Hint("the maximum of the whole tensor is subtracted, so a row far below it underflows to 0 / 0 = "
                        "NaN: subtract each row's own maximum", "x.max(dim=-1, keepdim=True).values")),
    "min_shift": (_in_float32(lambda x: _shifted(x, x.min(dim=-1, keepdim=True).values)),
                  "subtract the maximum, not the minimum: exp(x - max) is at most 1 and cannot overflow"),
}
STABLE_HINT = Hint("subtract each row's maximum m before the exponential; the shift cancels in the quotient",
                   "exp(x - m) / exp(x - m).sum(dim=-1, keepdim=True) with m = x.max(dim=-1, keepdim=True).values")
# rows far apart, one 200 wide, one moderate: each mistake leaves its own pattern of NaN rows
LARGE_EXAMPLE = torch.tensor([[1000.0, 1001.0, 1002.0, 1003.0], [-1000.0, -999.0, -998.0, -997.0],
                              [900.0, 1000.0, 1100.0, 1050.0], [0.0, 1.0, 2.0, 3.0]])


def large_input(shape: tuple, seed: int) -> torch.Tensor:
    """Rows spread over +-60 around offsets up to +-10^4; the first row's offset, 1000, overflows exp."""
    offsets = tensor((*shape[:-1], 1), seed + 1, -1e4, 1e4)
    offsets.view(-1)[0] = 1000.0
    return tensor(shape, seed, -60, 60) + offsets


@check("8.1", 1, "softmax_stable equals torch.softmax(x, dim=-1) on moderate inputs (1-, 2- and 3-d)")
def stable_moderate(sub):
    softmax_stable = require(sub, "softmax_stable", "function")

    def body(array):
        x = torch.from_numpy(array.copy())
        expect_function(softmax_stable(x), torch.softmax(x.double(), -1), f"softmax_stable(x) for x of shape "
                        f"{list(x.shape)}", {**R.softmax_mistakes(x), **STABLE_MISTAKES}, (x,),
                        default_hint=STABLE_HINT)

    run_property(body, float_arrays(bound=10.0), examples=EXAMPLES["function"] // 2)


@check("8.2", 2, "softmax_stable stays finite and exact where exp overflows (|x| up to 10^4, each row its own maximum)")
def stable_large(sub):
    softmax_stable = require(sub, "softmax_stable", "function")

    def expect_stable(x: torch.Tensor, what: str) -> None:
        expect_function(softmax_stable(x), torch.softmax(x.double(), -1), what, STABLE_MISTAKES, (x,),
                        default_hint=STABLE_HINT)

    expect_stable(LARGE_EXAMPLE.clone(), f"softmax_stable(x) for x = {LARGE_EXAMPLE.tolist()} (exp(x) "
                  "overflows here: the naive formula gives NaN in three of its rows)")
    run_property(lambda shape, seed: expect_stable(large_input(shape, seed), f"softmax_stable(x) for x of shape "
                                                   f"{list(shape)} with rows around offsets up to 10^4"),
                 distinct_shape(), st.integers(0, 2**16), examples=EXAMPLES["function"] // 3)


# -- (b) fused QKV -----------------------------------------------------------------------------


def _blocks(weight: torch.Tensor, sizes, layout: str) -> list[torch.Tensor]:
    """The query, key and value rows of qkv's weight (or bias), as a layout reads them."""
    d_out, heads, head_dim = sizes.d_out, sizes.num_heads, sizes.head_dim
    if layout == "strided":  # qkv.view(b, t, d_out, 3).unbind(-1)
        return [weight[i::3] for i in range(3)]
    if layout == "per_head":  # qkv.view(b, t, num_heads, 3 * head_dim), then split per head
        per_head = weight.reshape(heads, 3, head_dim, *weight.shape[1:])
        return [per_head[:, i].reshape(d_out, *weight.shape[1:]) for i in range(3)]
    chunks = weight.split(d_out, dim=0)
    return [chunks[int(i)] for i in layout]  # "012": queries, keys, values (the right order)


def mha_weights(state: dict, sizes, layout: str = "012") -> dict:
    """MultiHeadAttention's weights from a FusedQKVAttention's: qkv's row blocks are W_query's, W_key's, W_value's."""
    found = {f"{name}.weight": w for name, w in zip(QKV, _blocks(state["qkv.weight"], sizes, layout))}
    if "qkv.bias" in state:
        found.update({f"{name}.bias": b for name, b in zip(QKV, _blocks(state["qkv.bias"], sizes, layout))})
    found["out_proj.weight"], found["out_proj.bias"] = state["proj.weight"], state["proj.bias"]
    return found


_ORDER_HINT = Hint("qkv's three blocks of d_out outputs are the queries, the keys and the values, in this order",
                  "queries, keys, values = qkv.split(d_out, dim=-1)")
FUSED_LAYOUTS = {
    "per_head": Hint("qkv is read per head, as (num_heads, 3 * head_dim): the whole block of queries comes first, "
                     "then the keys, then the values, each split into heads after", "qkv.split(d_out, dim=-1)"),
    "strided": Hint("qkv is read as (d_out, 3), taking every third output: split it into three blocks of d_out "
                    "outputs instead, as GPT-2's c_attn", "qkv.split(d_out, dim=-1)"),
    **{"".join(map(str, p)): _ORDER_HINT for p in permutations(range(3)) if p != (0, 1, 2)},
}


def _fused_reference(state, x, sizes, mistake):
    if mistake in FUSED_LAYOUTS:
        return R.multi_head(mha_weights(state, sizes, mistake), x, sizes.num_heads)
    return R.multi_head(mha_weights(state, sizes), x, sizes.num_heads, mistake)


FUSED = replace(
    s6_mha.SPEC, name="FusedQKVAttention", reference=_fused_reference,
    mistakes={**FUSED_LAYOUTS, **R.SDPA_MASK_MISTAKES, **s6_mha.MISTAKES}, value_heads=lambda s: [],
    structure_hint=Hint("one nn.Linear qkv from d_in to 3 * d_out and a projection proj from d_out to d_out",
                        "self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias) and self.proj = nn.Linear(d_out, d_out)"))


def _dropout_in_training(spec, sub, sizes) -> None:
    """In training mode, dropout=0.5 changes the output from one pass to the next."""
    module = spec.build(sub, sizes, dropout=0.5)
    load_grader_weights(module, sizes.seed)
    samples = module.samples(spec.input(sizes), 8, seed=sizes.seed)
    if close(samples.std(0).sum(), torch.tensor(0.0), EXACT):
        raise CheckFailure(f"[{sizes}] {module.what} with dropout=0.5 gave the same output in 8 training passes: "
                           "dropout is never applied",
                           Hint("dropout is never applied: scaled_dot_product_attention takes the rate in training "
                                "mode (or apply self.dropout to the attention weights)",
                                "pass dropout_p=self.dropout.p if self.training else 0.0"))


def _equals_reference(spec, sub, sizes, dropout_hint: Hint) -> None:
    """Built with dropout=0.5, the module in eval mode equals the reference on its own weights."""
    module = spec.build(sub, sizes, dropout=0.5)
    x = spec.input(sizes)
    state = load_grader_weights(module, sizes.seed)
    out = module(x)
    what = f"[{sizes}] {module.what}(x) in eval mode"
    expected = spec.expected(state, x, sizes)
    if out.shape == expected.shape and not close(out, expected, FLOAT32) and not close(out, module(x), EXACT):
        raise CheckFailure(f"{what} changed from one call to the next", dropout_hint)
    expect_reference(spec, out, state, x, sizes, what)


@check("8.3", 1, "FusedQKVAttention: one qkv = nn.Linear(d_in, 3 * d_out), not three; proj = nn.Linear(d_out, d_out)")
def fused_structure(sub):
    require(sub, FUSED.name, "class")
    info = sub.build(FUSED.name, 5, 6, 7, 0.25, num_heads=3, seed=0).info
    separate = [n for n in QKV if f"{n}.weight" in info["params"]]
    if separate:
        raise CheckFailure(f"FusedQKVAttention still has {', '.join(separate)}",
                           Hint("the point is one matrix multiplication for all three, and no W_query, W_key, W_value",
                                "self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)"))
    for name, shape, bias in (("qkv", [18, 5], False), ("proj", [6, 6], True)):
        entry = info["modules"].get(name)
        if entry is None or entry["class"] != "Linear" or info["params"].get(f"{name}.weight") != shape \
                or entry.get("bias") != bias:
            raise CheckFailure(f"FusedQKVAttention(5, 6, 7, 0.25, num_heads=3).{name} should be an nn.Linear "
                               f"with weight {shape} and {'a' if bias else 'no'} bias", FUSED.structure_hint)
    with_bias = sub.build(FUSED.name, 5, 6, 7, 0.25, num_heads=3, qkv_bias=True, seed=0).info
    if not with_bias["modules"].get("qkv", {}).get("bias"):
        raise CheckFailure("with qkv_bias=True, qkv has no bias", Hint("qkv's bias must follow the qkv_bias argument",
                                                                        "nn.Linear(d_in, 3 * d_out, bias=qkv_bias)"))


@check("8.4", 2, "FusedQKVAttention equals MultiHeadAttention with W_query, W_key, W_value stacked into qkv "
              "(and no dropout in eval mode)")
def fused_equals_mha(sub):
    require(sub, FUSED.name, "class")
    run_property(lambda sizes: _equals_reference(
        FUSED, sub, sizes, "dropout must do nothing in eval mode: use nn.Dropout (it follows module.eval()) "
                           "on the attention weights"),
        attention_sizes(heads=True), examples=EXAMPLES["module"] // 2)
    run_property(lambda sizes: _dropout_in_training(FUSED, sub, sizes), attention_sizes(heads=True, min_tokens=2),
                 examples=2)


# -- (c) the memory of the attention weights -------------------------------------------------------

GPT2_FULL_CONTEXT = (1, 12, 1024, 4)  # one sequence, 12 heads, 1,024 tokens, float32: 48 MiB


@check("8.5", 1, "attn_weights_bytes: batch x heads x tokens x tokens values (48 MiB per GPT-2 sequence at full context)")
def attention_memory(sub):
    attn_weights_bytes = require(sub, "attn_weights_bytes", "function")

    def body(b, h, n, size):
        got = attn_weights_bytes.number(b, h, n, size)
        expected = b * h * n * n * size
        if got == expected and type(got) is int:
            return
        why = [(expected, "the count is right but a float: return a whole number of bytes, an int"),
               (expected // b, "multiply by batch_size too: every sequence has its own weights"),
               (expected // n, "each head holds a num_tokens x num_tokens matrix: num_tokens squared"),
               (expected // size, "multiply the number of values by bytes_per_value"),
               (expected // h, "every head has its own matrix: multiply by num_heads"),
               (expected / 2**20, "the unit is wrong: that is the size in MiB; return it in bytes"),
               (expected / 10**6, "the unit is wrong: that is the size in MB; return it in bytes")]
        raise CheckFailure(f"attn_weights_bytes({b}, {h}, {n}, {size}) returned {got:,}, expected {expected:,} "
                           f"bytes ({expected / 2**20:g} MiB)",
                           next((said for value, said in why if math.isclose(got, value, rel_tol=1e-9)),
                                Hint("one weight per batch, head, query and key, each bytes_per_value bytes",
                                     "batch_size * num_heads * num_tokens * num_tokens * bytes_per_value")))

    body(*GPT2_FULL_CONTEXT)
    body(8, 12, 1024, 4)
    run_property(body, st.integers(2, 64), st.integers(2, 32), st.integers(2, 4096), st.sampled_from([2, 4, 8]),
                 examples=EXAMPLES["function"] // 3)


# -- (d) PyTorch's fused scaled_dot_product_attention ---------------------------------------------

SDPA_SPEC = replace(s6_mha.SPEC, name="SDPAMultiHeadAttention", mistakes={**R.SDPA_MASK_MISTAKES, **s6_mha.MISTAKES})


@check("8.6", 1, "SDPAMultiHeadAttention equals MultiHeadAttention on the same weights: causal (the boolean-mask "
              "trap), no dropout in eval mode")
def sdpa_equals_mha(sub):
    require(sub, SDPA_SPEC.name, "class")
    run_property(lambda sizes: _equals_reference(
        SDPA_SPEC, sub, sizes, Hint("scaled_dot_product_attention applies dropout_p whatever the module's mode: "
                                    "give it the rate only in training mode (self.training)",
                                    "pass dropout_p=self.dropout if self.training else 0.0")),
        attention_sizes(heads=True), examples=EXAMPLES["module"] // 2)
    # training mode: dropout on each head's attention weights, rescaled (the checks of stage 6)
    run_property(lambda sizes: dropout_behaviour(SDPA_SPEC, sub, sizes),
                 attention_sizes(heads=True, min_batch=2, min_tokens=2, min_head_dim=2), examples=2)


@check("8.7", 1, "SDPAMultiHeadAttention keeps MultiHeadAttention's weights and calls "
              "scaled_dot_product_attention instead of its own softmax")
def sdpa_is_fused(sub):
    require(sub, SDPA_SPEC.name, "class")
    module = sub.build(SDPA_SPEC.name, 5, 6, 7, 0.0, num_heads=3, seed=0)
    linear_structure(module.info, QKV, [6, 5], bias=False)
    out_proj_structure(module.info, 6, ", as in MultiHeadAttention")
    calls = module.calls(tensor((2, 4, 5), 1))
    if SDPA not in calls:
        raise CheckFailure(f"{module.what}'s forward never calls {SDPA}",
                           Hint("replace the scores, mask, softmax and weights @ values by one call of "
                                "scaled_dot_product_attention",
                                "F.scaled_dot_product_attention(queries, keys, values, is_causal=True, dropout_p=...)"))
    own = sorted(c for c in calls if c.rsplit(".", 1)[-1] == "softmax")
    if own:
        raise CheckFailure(f"{module.what}'s forward still computes a softmax itself ({own[0]}), so it still "
                           "stores the attention weights", "let scaled_dot_product_attention do the whole "
                           "attention: no scores, mask or softmax of your own")


@check("8.8", 1, "softmax_stable and forward leave their inputs (and buffers) unchanged; two calls give the same output")
def side_effects(sub):
    require(sub, "softmax_stable", "function")
    function_side_effects(sub, "softmax_stable", x=tensor((3, 5), 1))
    for spec in (FUSED, SDPA_SPEC):
        require(sub, spec.name, "class")
        module_side_effects(spec, sub)


STAGE = StageParts(Stage(8, "efficiency", "Efficiency lab",
                         ("softmax_stable", "FusedQKVAttention", "attn_weights_bytes", "SDPAMultiHeadAttention")),
                   error_hints=[(SHAPE_ERROR, "a shape mismatch: in softmax_stable the maximum and the sum must keep "
                                 "their dimension to broadcast against each row; in a module, print the shape of each "
                                 "intermediate tensor (queries, keys, attn_scores, ...)")])
