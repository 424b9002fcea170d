"""Stage 7 (gpt2): build_gpt2_small_mha() sized like the smallest GPT-2."""

import torch

from autograder.chapters.ch03_attention import book
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.common import covers_context, diagnose, named_weights, require
from autograder.chapters.ch03_attention.checks.s6_mha import SPEC as MHA
from autograder.core.checks import check
from autograder.core.compare import EXACT, FLOAT32, close, expect_close, expect_shape
from autograder.core.failures import CheckFailure
from autograder.core.strategies import tensor

NAME = "build_gpt2_small_mha"
SIZE = book.GPT2_SMALL


def _build(sub):
    require(sub, NAME, "function")
    return sub.call_for_module(NAME)


@check("7.1", 3, "returns a MultiHeadAttention with 2,360,064 parameters")
def params(sub):
    module = _build(sub)
    if module.info["class"] != "MultiHeadAttention":
        raise CheckFailure(f"{NAME}() returned a {module.info['class']}, expected your MultiHeadAttention",
                           "return MultiHeadAttention(...) built with GPT-2's sizes")
    count = module.info["num_params"]
    if count != book.GPT2_SMALL_PARAMS:
        d = SIZE["d_out"]
        hint = {
            book.GPT2_SMALL_PARAMS - d: "out_proj needs its bias (nn.Linear(d_out, d_out))",
            book.GPT2_SMALL_PARAMS + 3 * d: "qkv_bias should stay False here",
        }.get(count, "d_in = d_out = 768: four 768x768 weight matrices plus out_proj's 768 biases")
        raise CheckFailure(f"{NAME}() has {count:,} parameters, expected {book.GPT2_SMALL_PARAMS:,}", hint)


@check("7.2", 2, "sizes: d_in = d_out = 768, context_length = 1024, dropout 0.0")
def sizes(sub):
    info = _build(sub).info
    for name in ("W_query", "W_key", "W_value", "out_proj"):
        shape = info["params"].get(f"{name}.weight")
        if shape != [768, 768]:
            raise CheckFailure(f"{name}.weight has shape {shape}, expected [768, 768]", "d_in = d_out = 768")
    mask = info["buffers"].get("mask", {}).get("shape")
    if mask is None or not covers_context(mask, 1024):
        raise CheckFailure(f"the mask has shape {mask}, expected [1024, 1024]", "context_length = 1024")
    p = info["modules"].get("dropout", {}).get("p")
    if p != 0.0:
        raise CheckFailure(f"dropout is {p}, expected 0.0", "pass dropout=0.0")


def _expect_twelve_heads(module, x, what: str, default_hint: str) -> torch.Tensor:
    """The module's output on ``x`` is 12-head causal attention on its own weights; when it
    is not, say which other head count it matches."""
    out = module(x)
    expect_shape(out, x.shape, what, "d_in = d_out = 768: the output has the input's shape")
    state = module.state()
    with named_weights(MHA, state):
        expected = R.multi_head(state, x, 12)
    hint = default_hint
    if not close(out, expected, FLOAT32):  # other head counts' outputs only explain a failure
        others = {f"{n} heads": R.multi_head(state, x, n) for n in (1, 2, 4, 6, 8, 16, 24)}
        hint = diagnose(out, others, {k: f"the output matches {k}: GPT-2 small has num_heads=12"
                                      for k in others}) or default_hint
    expect_close(out, expected, what, hint=hint)
    return out


@check("7.3", 3, "12 heads of 64 dimensions (output equals 12-head attention on its weights)")
def heads(sub):
    _expect_twelve_heads(_build(sub), tensor((2, 5, 768), 7, -1, 1), f"{NAME}()(x)",
                         "num_heads=12, head_dim = 768 // 12 = 64")


@check("7.4", 2, "runs at the full context of 1024 tokens, causally")
def full_context(sub):
    module = _build(sub)
    x = tensor((1, 1024, 768), 11, -1, 1)
    out = _expect_twelve_heads(module, x, f"{NAME}()(x) with 1024 tokens",
                               "context_length = 1024, the mask sliced to [:num_tokens, :num_tokens]")
    changed = x.clone()
    changed[:, 512:] = tensor((1, 512, 768), 12, -1, 1)
    if not close(module(changed)[:, :512], out[:, :512], EXACT):
        raise CheckFailure("outputs before token 512 changed when only later tokens changed",
                           "the mask lets tokens see the future")
    if not torch.isfinite(out).all():
        raise CheckFailure("the output contains NaN or inf at full context")
