"""Stage 7 (gpt2): build_gpt2_small_mha() sized like the smallest GPT-2."""

import torch

from autograder import book, reference as R
from autograder.checks import check
from autograder.checks.common import diagnose, require
from autograder.compare import EXACT, close, expect_close, expect_shape
from autograder.failures import CheckFailure
from autograder.strategies import tensor

ID = "gpt2"
NAME = "build_gpt2_small_mha"
SIZE = book.GPT2_SMALL


def _build(sub):
    require(sub, NAME, "function")
    return sub.call_for_module(NAME)


@check(ID, 3, "returns a MultiHeadAttention with 2,360,064 parameters")
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


@check(ID, 2, "sizes: d_in = d_out = 768, context_length = 1024, dropout 0.0")
def sizes(sub):
    info = _build(sub).info
    for name in ("W_query", "W_key", "W_value", "out_proj"):
        shape = info["params"].get(f"{name}.weight")
        if shape != [768, 768]:
            raise CheckFailure(f"{name}.weight has shape {shape}, expected [768, 768]", "d_in = d_out = 768")
    mask = info["buffers"].get("mask", {}).get("shape")
    if mask != [1024, 1024]:
        raise CheckFailure(f"the mask has shape {mask}, expected [1024, 1024]", "context_length = 1024")
    p = info["modules"].get("dropout", {}).get("p")
    if p != 0.0:
        raise CheckFailure(f"dropout is {p}, expected 0.0", "pass dropout=0.0")


@check(ID, 3, "12 heads of 64 dimensions (output equals 12-head attention on its weights)")
def heads(sub):
    module = _build(sub)
    x = tensor((2, 5, 768), 7, -1, 1)
    out = module(x)
    expect_shape(out, (2, 5, 768), f"{NAME}()(x)")
    state = module.state()
    expected = R.multi_head(state, x, 12)
    others = {f"{n} heads": R.multi_head(state, x, n) for n in (1, 2, 4, 6, 8, 16, 24)}
    hint = diagnose(out, others, {k: f"the output matches {k}: GPT-2 small has num_heads=12" for k in others})
    expect_close(out, expected, f"{NAME}()(x)", hint=hint or "num_heads=12, head_dim = 768 // 12 = 64")


@check(ID, 2, "runs at the full context of 1024 tokens, causally")
def full_context(sub):
    module = _build(sub)
    x = tensor((1, 1024, 768), 11, -1, 1)
    out = module(x)
    expect_shape(out, (1, 1024, 768), f"{NAME}()(x) with 1024 tokens")
    expect_close(out, R.multi_head(module.state(), x, 12), f"{NAME}()(x) with 1024 tokens",
                 hint="slice the mask to [:num_tokens, :num_tokens]")
    changed = x.clone()
    changed[:, 512:] = tensor((1, 512, 768), 12, -1, 1)
    if not close(module(changed)[:, :512], out[:, :512], EXACT):
        raise CheckFailure("outputs before token 512 changed when only later tokens changed",
                           "the mask lets tokens see the future")
    if not torch.isfinite(out).all():
        raise CheckFailure("the output contains NaN or inf at full context")
