"""Stage 7 (gpt2): build_gpt2_small_mha() sized like the smallest GPT-2."""

import torch

from autograder.chapters.ch03_attention.checks.diagnosis import diagnose
from autograder.chapters.ch03_attention.checks.policy import no_library_attention
from autograder.chapters.ch03_attention.checks.properties import book_unless_working, excusing_errors
from autograder.chapters.ch03_attention.checks.s6_mha import SPEC as MHA
from autograder.chapters.ch03_attention.checks.spec import expect_weights_matter, load_grader_weights, require
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import FLOAT32, close, expect_close, expect_shape
from autograder.core.failures import NAMED, CheckFailure, Hint
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import explaining, tensor

NAME = "build_gpt2_small_mha"
SIZE = dict(d_in=768, d_out=768, num_heads=12, context_length=1024, dropout=0.0)  # GPT-2 small's attention
PARAMS = 2_360_064  # the book's count of its parameters

# the book's MultiHeadAttention, built in place of the student's when theirs fails at GPT-2's sizes
BOOK_MULTI_HEAD_ATTENTION = "import math\nimport torch\nfrom torch import nn\n\n\n" + '''class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        split = (b, num_tokens, self.num_heads, self.head_dim)
        queries, keys, values = (w(x).view(split).transpose(1, 2) for w in (self.W_query, self.W_key, self.W_value))
        scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / math.sqrt(self.head_dim), dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))
'''

SWAPPED = ("MultiHeadAttention takes (d_in, d_out, context_length, dropout, num_heads), dropout before num_heads: "
           "check the argument order of your call")
ERROR_HINTS = [
    (r"ZeroDivisionError", Hint(f"num_heads came out as 0 (a division by zero). {SWAPPED}",
                                rank=NAMED, mistake="gpt2_arguments_swapped")),
    (r"dropout probability has to be between 0 and 1", Hint(f"a dropout rate outside 0..1 reached nn.Dropout. {SWAPPED}",
                                                            rank=NAMED, mistake="gpt2_arguments_swapped")),
    (r"AssertionError|ValueError", Hint("MultiHeadAttention rejected the sizes: compare d_in, d_out and num_heads "
                                        "with GPT-2 small's (head_dim is computed inside)",
                                        "d_in = d_out = 768 and num_heads = 12 (head_dim = 768 // 12 = 64)")),
    (SHAPE_ERROR, Hint("GPT-2 small takes 768-wide inputs of up to 1024 tokens: compare d_in, d_out and "
                       "context_length with these", "d_in = d_out = 768, context_length = 1024")),
]


# where the student's MultiHeadAttention must work for stage 7 to use it: GPT-2's sizes, a few tokens
GPT2_PROBE = Sizes(batch=1, tokens=5, d_in=SIZE["d_in"], d_out=SIZE["d_out"], context_length=SIZE["context_length"],
                   num_heads=12, seed=3)
SHORT = 5  # tokens: a longer output is compared, and explained, on its first few rows


def _book_mha(sub, why: str) -> None:
    where = "" if MHA.name in sub.timed_out else " at GPT-2 small's sizes"
    sub.substituting(MHA.name, BOOK_MULTI_HEAD_ATTENTION,
                     f"graded with the book's MultiHeadAttention: {why}{where} (stage 6 grades it)")


def _working_mha(sub) -> None:
    book_unless_working(MHA, sub, (GPT2_PROBE,), _book_mha)


def _build(sub):
    """The builder's module, built once a stage: each check loads the weights it judges."""
    require(sub, NAME, "function")
    _working_mha(sub)
    return sub.memoised("gpt2_module", lambda: sub.call_for_module(NAME))


def _excusing_own_errors(sub, x, judge) -> None:
    """Run ``judge`` on the builder's module; an error the student's MultiHeadAttention raises alike
    is stage 6's: run it again with the book's class."""
    excusing_errors(MHA, sub, lambda: _own_mha(sub), x, lambda: judge(_build(sub)), _book_mha,
                    f"on {x.shape[1]} tokens")


def _expect_uses_weights(sub) -> None:
    """Points only when forward uses the weights (judged once a stage)."""
    x = tensor((1, 3, 768), 5, -1, 1)

    def judge(module):
        state = load_grader_weights(module, 5)
        expect_weights_matter(module, x, module(x), state, 5, restore=False)
    sub.memoised("gpt2_uses_weights", lambda: _excusing_own_errors(sub, x, judge) or True)


def _own_mha(sub, num_heads: int = 12):
    """The student's own MultiHeadAttention at GPT-2 small's sizes (stage 6 grades the class), built once a stage."""
    return sub.memoised(("gpt2_own", num_heads), lambda: sub.build(
        MHA.name, SIZE["d_in"], SIZE["d_out"], SIZE["context_length"], SIZE["dropout"], num_heads=num_heads, seed=0))


@check("7.1", 3, "returns a MultiHeadAttention with 2,360,064 parameters")
def params(sub):
    module = _build(sub)
    if module.info["class"] != "MultiHeadAttention":
        raise CheckFailure(f"{NAME}() returned a {module.info['class']}, expected your MultiHeadAttention",
                           "return MultiHeadAttention(...) built with GPT-2's sizes")
    count, own = module.info["num_params"], _own_mha(sub).info["num_params"]
    if count != own:
        hint = _params_hint(module.info["params"], _own_mha(sub).info["params"])
        raise CheckFailure(f"{NAME}() has {count:,} parameters; your MultiHeadAttention built with GPT-2 small's "
                           f"sizes has {own:,} (the book's has {PARAMS:,})", hint)
    _expect_uses_weights(sub)


def _params_hint(mine: dict, own: dict) -> Hint | str:
    """What the parameters show against the student's own MultiHeadAttention at GPT-2's sizes."""
    extra = sorted(name for name in mine if name not in own)
    if extra and all(name.endswith(".bias") and name.split(".")[0] in ("W_query", "W_key", "W_value")
                     for name in extra) and all(mine[n] == own[n] for n in own if n in mine):
        return Hint("the query, key and value projections carry biases (" + ", ".join(extra) + "), which "
                    "GPT-2 small's attention here has none of: qkv_bias should stay False", rank=NAMED,
                    mistake="gpt2_qkv_bias")
    differ = [f"{name} has shape {mine[name]}, expected {shape}" for name, shape in own.items()
              if name in mine and mine[name] != shape]
    if differ:
        return Hint("; ".join(differ[:2]) + ": d_in and d_out are GPT-2 small's embedding width", "d_in = d_out = 768",
                    rank=NAMED, mistake="gpt2_wrong_sizes")
    return Hint("compare each size with GPT-2 small's", "d_in = d_out = 768, context_length = 1024, num_heads = 12, "
                "dropout 0.0, qkv_bias False")


@check("7.2", 2, "sizes: d_in = d_out = 768, context_length = 1024, dropout 0.0")
def sizes(sub):
    module = _build(sub)
    info, own = module.info, _own_mha(sub).info
    for name in ("W_query", "W_key", "W_value", "out_proj"):
        shape = info["params"].get(f"{name}.weight")
        if shape != [768, 768] and shape != own["params"].get(f"{name}.weight"):
            raise CheckFailure(f"{name}.weight has shape {shape}, expected [768, 768]",
                               Hint("d_in and d_out are GPT-2 small's embedding width", "d_in = d_out = 768"))
    # the buffers and dropout layers the student's own class has (a misnamed one is stage 6's)
    for name, entry in own["buffers"].items():
        mine = info["buffers"].get(name, {}).get("shape")
        if mine != entry["shape"]:
            raise CheckFailure(f"the buffer {name} has shape {mine}, expected {entry['shape']}",
                               Hint("the mask covers GPT-2 small's whole context", "context_length = 1024"))
    rates = [entry["p"] for entry in info["modules"].values() if entry.get("class") == "Dropout"]
    if any(p != 0.0 for p in rates):
        raise CheckFailure(f"dropout is {max(rates)}, expected 0.0", Hint("the module is built with dropout", "pass dropout=0.0"))
    _expect_uses_weights(sub)


def _expect_same_as_own(sub, x, what: str, default_hint: Hint) -> None:
    _excusing_own_errors(sub, x, lambda module: _judge_same_as_own(sub, module, x, what, default_hint))


def _judge_same_as_own(sub, module, x, what: str, default_hint: Hint) -> None:
    """The output on ``x`` with the grader's weights equals the student's own 12-head MultiHeadAttention's,
    on the first :data:`SHORT` tokens (causal: those rows depend on those tokens only)."""
    own = _own_mha(sub)
    mine, theirs = set(module.info["params"]), set(own.info["params"])
    if mine != theirs:  # other weights (biases): no 12-head twin to compare with
        differ = "; ".join(f"{what} {', '.join(sorted(names))}" for what, names in
                           (("it has", mine - theirs), ("it lacks", theirs - mine)) if names)
        raise CheckFailure(f"{NAME}() has other parameters than your MultiHeadAttention built with GPT-2 small's "
                           f"sizes ({differ})", _params_hint(module.info["params"], own.info["params"]))
    state = load_grader_weights(module, 7)
    own.load(state)
    short = x[:, :SHORT].contiguous()
    expected = own(short)
    # a longer input runs only once its first tokens are right (a wrong head count costs no long pass)
    for part in (x,) if x.shape[1] <= SHORT else (short, x):
        said = what if part is x else f"{what} (its first {SHORT} tokens alone)"
        out = module(part)
        expect_shape(out, part.shape, said, Hint("the output has the input's shape: d_in and d_out are GPT-2 "
                                                 "small's embedding width", "d_in = d_out = 768"))
        if not close(out[:, :SHORT], expected, FLOAT32):
            break
    else:
        _expect_uses_weights(sub)
        return
    # the check fails: other head counts only explain the failure
    where = f" on the first {SHORT} tokens" if x.shape[1] > SHORT else ""
    head_count = _head_count_hint(sub, module, state, short, out[:, :SHORT], where) if explaining() else None
    if not head_count:  # no head count gives it: perhaps the weights are ignored
        expect_weights_matter(module, part, out, state, 7, restore=False)
    expect_close(out[:, :SHORT], expected, said, hint=head_count or default_hint)

OTHER_HEAD_COUNTS = (1, 2, 4, 6, 8, 16, 24)


def _head_count_hint(sub, module, state: dict, x: torch.Tensor, out: torch.Tensor, where: str) -> Hint | None:
    """The head count whose twin (the student's own MultiHeadAttention built with it, on the same
    weights) gives ``out`` on ``x``: the one the student's class keeps (``num_heads``, if it does) first."""
    held = module.info["scalars"].get("num_heads")
    kept = isinstance(held, int) and not isinstance(held, bool) and held != 12 and 0 < held <= 768 and 768 % held == 0
    for n in dict.fromkeys(((held,) if kept else ()) + OTHER_HEAD_COUNTS):
        other = _own_mha(sub, n)
        other.load(state)
        key = f"gpt2_num_heads_{n}"
        hint = diagnose(out, {key: other(x)},
                        {key: Hint(f"the output{where} matches {n} heads, not GPT-2 small's head count", "num_heads=12")})
        if hint:
            return hint
    return None


@check("7.3", 3, "12 heads of 64 dimensions (output equals your 12-head MultiHeadAttention on the same weights)")
def heads(sub):
    _expect_same_as_own(sub, tensor((2, 5, 768), 7, -1, 1), f"{NAME}()(x)",
                        Hint("the output differs from your MultiHeadAttention's with GPT-2 small's heads",
                             "num_heads=12, head_dim = 768 // 12 = 64"))


@check("7.4", 2, "runs at the full context of 1024 tokens")
def full_context(sub):
    x = tensor((1, 1024, 768), 11, -1, 1)
    with sub.full_size():
        _expect_same_as_own(sub, x, f"{NAME}()(x) with 1024 tokens",
                            Hint("the output at GPT-2 small's full context differs from your MultiHeadAttention's",
                                 "context_length = 1024, the mask sliced to [:num_tokens, :num_tokens]"))


STAGE = StageParts(
    Stage(7, "gpt2", "A GPT-2-size attention module", ("build_gpt2_small_mha",)),
    error_hints=ERROR_HINTS,
    # charged only for calls the student's own MultiHeadAttention (stage 6) does not make
    call_policy=no_library_attention(
        (lambda sub: _working_mha(sub) or sub.call_for_module("build_gpt2_small_mha"), (1, 4, 768)),
        parts=(lambda sub: sub.build(MHA.name, 768, 768, 1024, 0.0, num_heads=12, seed=0), (1, 4, 768))),
)
