"""Stage 5 (wrapper): MultiHeadAttentionWrapper stacks num_heads CausalAttention heads."""

from dataclasses import replace

import torch

from autograder.chapters.ch03_attention import book, exhibits
from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.checks.diagnosis import diagnose, diagnose_module
from autograder.chapters.ch03_attention.checks.policy import no_library_attention
from autograder.chapters.ch03_attention.checks.properties import (
    STRUCTURE_SIZES,
    batch_independence,
    book_unless_working,
    causality,
    excusing_errors,
    expect_uses_weights,
    judged,
    module_side_effects,
    moves_to_device,
    positions,
)
from autograder.chapters.ch03_attention.checks.s4_causal import BOOK_SIZES as CAUSAL_BOOK_SIZES
from autograder.chapters.ch03_attention.checks.s4_causal import CAUSAL as CAUSAL_PRINTED
from autograder.chapters.ch03_attention.checks.s4_causal import SPEC as CAUSAL
from autograder.chapters.ch03_attention.checks.spec import (
    BookCall,
    ModuleSpec,
    expect_weights_matter,
    load_grader_weights,
    load_weights,
    perturbed,
    require,
)
from autograder.chapters.ch03_attention.checks.structure import seen
from autograder.chapters.ch03_attention.examples import Sizes, attention_sizes
from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import BOOK, FLOAT32, close, expect_close, expect_shape
from autograder.core.failures import NAMED, CheckFailure, Hint, StudentCodeError
from autograder.core.hints import SHAPE_ERROR
from autograder.core.strategies import EXAMPLES, run_property, variation_seed

NAME = "MultiHeadAttentionWrapper"

# manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(BATCH)[0]
WRAPPER = torch.tensor([
    [-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
    [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
    [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493],
])
# the exercise: d_out = 1 makes the two-head wrapper's output 2-dimensional
WRAPPER_D_OUT_1 = torch.tensor([
    [-0.5740, 0.2216], [-0.7320, 0.0155], [-0.7774, -0.0546],
    [-0.6979, -0.0817], [-0.6538, -0.0957], [-0.6424, -0.1065],
])

# the book's CausalAttention, built in place of the student's when theirs is broken (stage 4's mistake)
BOOK_CAUSAL_ATTENTION = "import math\nimport torch\nfrom torch import nn\n\n\n" + '''class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)) @ values
'''

ERROR_HINTS = [
    (SHAPE_ERROR, Hint("each head maps (batch, num_tokens, d_in) to (batch, num_tokens, d_out), and the heads' "
                       "outputs are concatenated along the features", "torch.cat(..., dim=-1)")),
]

SPEC = ModuleSpec(
    name=NAME, book=BookCall(Sizes(2, 6, 3, 4, 6, 2, 0), (3, 2, 6, 0.0), 123, num_heads=2), batched=True, causal=True,
    args=lambda s: (s.d_in, s.head_dim, s.context_length, 0.0, s.num_heads),
    reference=lambda state, x, s, mistake: R.wrapper(state, x, s.num_heads, mistake),
    mistakes={**R.mistakes_for(causal=True), **R.WRAPPER_MISTAKES},
    value_heads=lambda s: [f"heads.{i}.W_value" for i in range(s.num_heads)], multi_head=True,
    structure_hint=lambda missing, present: _heads_hint(missing, present),
    shape_hint=Hint("the output is (batch, num_tokens, num_heads * d_out): concatenate the heads' outputs along the "
                    "last dimension", "torch.cat([head(x) for head in self.heads], dim=-1)"))

SHARED_HEADS = ("the heads share one set of weights: create a new CausalAttention for each head, in a loop "
                "([CausalAttention(...)] * num_heads repeats one head)")


def _heads_hint(missing: str, present: set) -> Hint | str:
    if missing.startswith("heads.") and any(name.startswith("heads.0.") for name in present):
        # named_parameters() lists a module once however often the ModuleList repeats it
        return SHARED_HEADS
    return (Hint("the heads are num_heads CausalAttention modules held in an nn.ModuleList named heads",
                 "self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])"))


CONCAT_HINT = (Hint("build the heads in order and concatenate their outputs along the last dimension",
                    "torch.cat([head(x) for head in self.heads], dim=-1)"))
WEIGHTS_HINT = ("each head is right but the weights are not the book's: create the heads one after "
                "the other in __init__, before anything else random")


# where the student's CausalAttention must work for the heads to be its own (the mask sliced too)
HEAD_PROBES = (CAUSAL_BOOK_SIZES, Sizes(batch=2, tokens=4, d_in=5, d_out=3, context_length=7, num_heads=1, seed=1))


def _book_heads(sub, why: str) -> None:
    sub.substituting(CAUSAL.name, BOOK_CAUSAL_ATTENTION,
                     f"graded with the book's CausalAttention as its heads: {why} (stage 4 grades it)")


def working_heads(sub) -> None:
    """The wrapper must be defined; when the student's CausalAttention is broken (stage 4's mistake), its
    heads are the book's."""
    require(sub, NAME, "class")
    book_unless_working(CAUSAL, sub, HEAD_PROBES, _book_heads)


def own_heads(sub, state: dict, x: torch.Tensor, sizes: Sizes) -> torch.Tensor:
    """What the wrapper must output: the student's own CausalAttention with each head's weights, concatenated."""
    extra = sorted(name for name in state if not name.startswith("heads."))
    if extra:
        raise CheckFailure(f"{NAME} has weights of its own besides its heads ({', '.join(extra)})",
                           Hint("the wrapper only concatenates the heads' outputs: no output projection or other "
                                "layer of its own (out_proj comes with MultiHeadAttention)", rank=NAMED, mistake='wrapper_own_layers'))
    head = sub.build(CAUSAL.name, sizes.d_in, sizes.head_dim, sizes.context_length, 0.0, seed=0)
    outputs = []
    for i in range(sizes.num_heads):
        prefix = f"heads.{i}."
        weights = {name[len(prefix):]: value for name, value in state.items() if name.startswith(prefix)}
        if not weights:
            raise CheckFailure(f"{NAME} has no weights for head {i}",
                               _heads_hint(f"{prefix}W_query.weight", set(state)))
        load_weights(CAUSAL, head, weights)
        outputs.append(head(x))
    return torch.cat(outputs, -1)


def _expect_own_heads(module, out: torch.Tensor, state: dict, x: torch.Tensor, sizes: Sizes, what: str) -> None:
    expected = own_heads(module.sub, state, x, sizes)
    if out.shape != expected.shape:  # the heads along another axis?
        heads = expected.split(sizes.head_dim, -1)
        along = {"concat_batch": torch.cat(heads, 0), "concat_tokens": torch.cat(heads, 1)}
        expect_shape(out, expected.shape, what, diagnose(out, along, R.WRAPPER_MISTAKES) or SPEC.shape_hint)
    if close(out, expected, FLOAT32):
        return
    hint = diagnose_module(SPEC, out, state, x, sizes) or CONCAT_HINT
    expect_close(out, expected, f"{what} (expected: your CausalAttention heads with the same weights, "
                 "concatenated)", hint=hint)


def _excusing_head_errors(sub, sizes: Sizes, x: torch.Tensor, judge) -> None:
    """Run ``judge``; an error the student's CausalAttention raises alike is stage 4's: run it again on the book's."""
    excusing_errors(CAUSAL, sub, lambda: sub.build(CAUSAL.name, sizes.d_in, sizes.head_dim, sizes.context_length,
                                                   0.0, seed=0), x, judge, _book_heads, f"at num_tokens={x.shape[1]}")


def _book(sub, d_out: int, printed: torch.Tensor) -> None:
    """The book's example, judged on the wrapper's own job (its heads concatenated), then beyond it."""
    sizes = Sizes(batch=2, tokens=6, d_in=3, d_out=2 * d_out, context_length=6, num_heads=2, seed=0)
    _excusing_head_errors(sub, sizes, book.BATCH, lambda: _judge_book(sub, d_out, printed, sizes))


def _judge_book(sub, d_out: int, printed: torch.Tensor, sizes: Sizes) -> None:
    working_heads(sub)
    module = sub.build(NAME, 3, d_out, 6, 0.0, num_heads=2, seed=123)
    what = f"{module.what}(batch)"
    out = module(book.BATCH)
    _expect_own_heads(module, out, module.state(), book.BATCH, sizes, what)
    # the book's values need heads that initialise like the book's (stage 4's example)
    if close(sub.build(CAUSAL.name, 3, 2, 6, 0.0, seed=123)(book.BATCH), torch.stack((CAUSAL_PRINTED, CAUSAL_PRINTED)),
             BOOK):
        expect_close(out, printed, what, tol=BOOK, hint=WEIGHTS_HINT)
    seed = variation_seed()
    x = perturbed(book.BATCH, seed)
    state = load_grader_weights(module, 1000 + seed)
    out = module(x)
    expect_weights_matter(module, x, out, state, 1000 + seed)
    _expect_own_heads(module, out, state, x, sizes, f"{module.what} on the book's inputs changed slightly")


@check("5.1", 2, "book example: manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)")
def book_example(sub):
    _book(sub, 2, torch.stack((WRAPPER, WRAPPER)))


@check("5.2", 1, "exercise: d_out=1 makes the two-head output 2-dimensional")
def exercise(sub):
    _book(sub, 1, torch.stack((WRAPPER_D_OUT_1, WRAPPER_D_OUT_1)))


@check("5.3", 2, "structure: `heads` is an nn.ModuleList of num_heads CausalAttention modules")
def structure(sub):
    working_heads(sub)
    info = sub.build(NAME, 4, 2, 5, 0.0, num_heads=3, seed=0).info
    container = info["module_containers"].get("heads")
    if container:
        raise seen(f"`heads` is a plain Python {container}, so its weights are not registered", "hold the heads in an "
                   "nn.ModuleList so .parameters(), .to() and .eval() reach every head", "nn.ModuleList([...])")
    if info["modules"].get("heads", {}).get("class") != "ModuleList":
        raise seen("no nn.ModuleList named `heads`", "the heads live in an nn.ModuleList named heads, one "
                   "CausalAttention per head", "self.heads = nn.ModuleList([CausalAttention(...) for _ in range(num_heads)])")
    heads = [n for n in info["modules"] if n.count(".") == 1 and n.startswith("heads.")]
    if len(heads) != 3:
        # named_modules() lists a module once however often it is repeated
        raise seen(f"num_heads=3 gave {len(heads)} distinct head{'s' * (len(heads) != 1)}", SHARED_HEADS)
    for name in heads:
        if info["modules"][name]["class"] != "CausalAttention":
            raise seen(f"`{name}` is a {info['modules'][name]['class']}, expected CausalAttention",
                       "reuse your CausalAttention class for each head")
        shape = info["params"].get(f"{name}.W_query.weight")
        if shape == [0, 4]:
            raise seen(f"`{name}.W_query.weight` has shape {shape}, expected [2, 4]", "each head is d_out wide, and "
                       "the wrapper outputs num_heads * d_out features: your heads split d_out among them, as "
                       "MultiHeadAttention does", "CausalAttention(d_in, d_out, ...)", "wrapper_heads_split_d_out")
        if shape != [2, 4]:
            raise seen(f"`{name}.W_query.weight` has shape {shape}, expected [2, 4]", "each head is as wide as the "
                       "wrapper's d_out, which is not split among the heads: the output has num_heads * d_out "
                       "features", "CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)")
    # dropout and qkv_bias reach every head, as far as the student's own CausalAttention honours them
    info = sub.build(NAME, 4, 2, 5, 0.25, num_heads=2, qkv_bias=True, seed=0).info
    own = sub.build(CAUSAL.name, 4, 2, 5, 0.25, qkv_bias=True, seed=0).info
    own_p, own_bias = own["modules"].get("dropout", {}).get("p"), own["modules"].get("W_query", {}).get("bias")
    for name in ("heads.0", "heads.1"):
        p = info["modules"].get(f"{name}.dropout", {}).get("p")
        bias = info["modules"].get(f"{name}.W_query", {}).get("bias")
        if p != own_p or bias != own_bias:
            raise CheckFailure(f"MultiHeadAttentionWrapper(..., dropout=0.25, qkv_bias=True) built a head with "
                               f"dropout {p} and {'a' if bias else 'no'} bias",
                               Hint("pass dropout and qkv_bias on to every head",
                                    "CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)"))
        # context_length reaches the heads too: their buffers (the mask) are sized by it
        for buffer, shape in own["buffers"].items():
            got = info["buffers"].get(f"{name}.{buffer}", {}).get("shape")
            if got not in (None, shape["shape"]):
                raise seen(f"MultiHeadAttentionWrapper(4, 2, 5, ...) built a head whose `{buffer}` has shape {got}, "
                           f"expected {shape['shape']} as CausalAttention(4, 2, 5, ...) builds it",
                           "each head is built with the wrapper's own arguments, in CausalAttention's order",
                           "CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)", "wrapper_head_arguments")
    _excusing_head_errors(sub, STRUCTURE_SIZES, SPEC.input(STRUCTURE_SIZES), lambda: expect_uses_weights(SPEC, sub))


@check("5.4", 2, "head i fills columns [i*d_out, (i+1)*d_out) and equals causal attention on its weights")
def oracle(sub):
    working_heads(sub)

    def body(sizes):
        def judge():
            module, state, x, out = judged(SPEC, sub, sizes)
            _expect_own_heads(module, out, state, x, sizes, f"{module.what}(x)")
        _excusing_head_errors(sub, sizes, SPEC.input(sizes), judge)

    run_property(body, attention_sizes(heads=True), examples=EXAMPLES["module"], show_input=SPEC.input)


def _heads_explain(sub, prop, sizes: Sizes, *rest) -> bool:
    """Whether a property the wrapper breaks is its heads' doing (the student's CausalAttention breaks it too)."""
    module, state, x, out = judged(SPEC, sub, sizes)
    if not close(out, own_heads(sub, state, x, sizes), FLOAT32):
        return False
    try:
        prop(CAUSAL, sub, replace(sizes, d_out=sizes.head_dim, num_heads=1), *rest)
    except CheckFailure:
        return True
    return False


def _wrapper_property(sub, prop):
    def judge(sizes, *rest):
        try:
            prop(SPEC, sub, sizes, *rest)
        except StudentCodeError:
            raise
        except CheckFailure:
            if CAUSAL.name in sub.substitute or not _heads_explain(sub, prop, sizes, *rest):
                raise
            _book_heads(sub, f"yours breaks the same property ({prop.__name__.replace('_', ' ')})")
            prop(SPEC, sub, sizes, *rest)

    return lambda sizes, *rest: _excusing_head_errors(sub, sizes, SPEC.input(sizes), lambda: judge(sizes, *rest))


@check("5.5", 1, "causality and batch independence")
def causal_and_batch(sub):
    working_heads(sub)
    run_property(_wrapper_property(sub, causality), attention_sizes(heads=True, min_tokens=2),
                 positions, examples=EXAMPLES["module"] // 2, show_input=SPEC.input)
    run_property(_wrapper_property(sub, batch_independence), attention_sizes(heads=True, min_batch=2),
                 examples=EXAMPLES["module"] // 2, show_input=SPEC.input)


@check("5.6", 1, "moves to another device with .to() (every head's mask moves too)")
def device(sub):
    working_heads(sub)
    run_property(_wrapper_property(sub, moves_to_device), attention_sizes(heads=True), examples=2)


@check("5.7", 1, "forward leaves its input and its heads' buffers unchanged; two calls give the same output")
def side_effects(sub):
    working_heads(sub)
    _wrapper_property(sub, module_side_effects)(STRUCTURE_SIZES)


STAGE = StageParts(
    Stage(5, "wrapper", "Multi-head attention wrapper", ("MultiHeadAttentionWrapper",)),
    error_hints=ERROR_HINTS,
    # charged only for calls its heads (stage 4's CausalAttention) do not make
    call_policy=no_library_attention(
        (lambda sub: book_unless_working(CAUSAL, sub, HEAD_PROBES, _book_heads)
         or sub.build(NAME, 3, 2, 6, 0.0, num_heads=2, seed=0), (2, 4, 3)),
        parts=(lambda sub: sub.build(CAUSAL.name, 3, 2, 6, 0.0, seed=0), (2, 4, 3))),
    exhibit=exhibits.attention_weights(SPEC),
)
