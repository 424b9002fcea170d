"""What an exception usually means in this chapter, tried before the general table of
:mod:`autograder.core.hints`: (pattern, hint) per stage id (``ERROR_HINTS``, each stage's
``error_hints``), then for every stage (``COMMON_ERROR_HINTS``, the chapter's
``common_error_hints``); and what the sizes in a shape error say about the drawn example
(:func:`shape_error_hint`, read by :meth:`.examples.Sizes.read_error`)."""

from __future__ import annotations

import re

from autograder.core.chapter import ErrorHints
from autograder.core.failures import Diagnosis
from autograder.core.hints import FLOAT_SIZE, NEGATIVE_SIZE, SHAPE_ERROR, SHAPE_MISMATCH, fix

# What an error usually means in any stage of the chapter, in its words: tried after the stage's
# own table and before core's general one (in the order core's table had them, whose generic
# entries they replace).
COMMON_ERROR_HINTS: ErrorHints = [
    (SHAPE_MISMATCH,
     "a shape mismatch: print the shape of each intermediate tensor (queries, keys, "
     "attn_scores, ...) and compare it with the shapes in the docstring"),
    (r"only supports boolean masks|expected .*Bool.*mask|mask .*must be .*bool",
     "masked_fill needs a boolean mask" + fix(": self.mask.bool()[:num_tokens, :num_tokens]")),
    (r"(?i:expected .*same device)|on the expected device|device type",
     "a tensor lives on another device than the input: register the mask with "
     "self.register_buffer(...) and create new tensors with device=x.device"),
    (r"out of memory|can't allocate memory|DefaultCPUAllocator",
     "the code allocates far more memory than attention needs: check the sizes you create"),
    (FLOAT_SIZE,
     "a size is a float: sizes are whole numbers (integer division, //, not /)" +
     fix(", head_dim = d_out // num_heads")),
    (r"dimension out of range|Dimension out of range",
     "an index or dim refers to an axis the tensor does not have: count the dimensions "
     "(batch, tokens, features)"),
]

ERROR_HINTS: dict[str, ErrorHints] = {
    "softmax": [
        (r"[Dd]imension out of range", "the input may have any number of dimensions (the book's scores "
         "are 1-d): take the sum along dim=-1, the last dimension, which every tensor has"),
        (SHAPE_ERROR, "the sums must keep their dimension to broadcast against each row" +
         fix(": exp_x.sum(dim=-1, keepdim=True)")),
    ],
    "scores": [
        (SHAPE_ERROR, "inputs are (num_tokens, d): the scores are (num_tokens x num_tokens), every token with every "
         "token, and the context vectors (num_tokens x d)" +
         fix(": inputs @ inputs.T and attn_weights @ inputs")),
    ],
    "self_attention": [
        (r"permute\(\): duplicate dims|permute.*does not match the length", "permute lists every axis once, in the "
         "new order: the keys' transpose for the scores is keys.T, keys.transpose(0, 1) or keys.permute(1, 0)"),
        (SHAPE_ERROR, "x is (num_tokens, d_in): queries, keys and values are (num_tokens, d_out), the "
         "scores (num_tokens, num_tokens); v1 multiplies x @ W (W of shape (d_in, d_out))" +
         fix(": the scores are queries @ keys.T")),
    ],
    "causal": [
        (r"buffer name should be a string", "register_buffer takes the buffer's name first, then the tensor" +
         fix(": self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))")),
        (SHAPE_ERROR, "x is (batch, num_tokens, d_in): transpose only the keys' last two axes "
         "(" + fix("keys.transpose(1, 2); ") + "keys.T reverses the batch axis too) and slice the mask to "
         "the input's num_tokens"),
    ],
    "wrapper": [
        (SHAPE_ERROR, "each head maps (batch, num_tokens, d_in) to (batch, num_tokens, d_out); "
         "concatenate the heads' outputs along dim=-1, the features"),
    ],
    "gpt2": [
        (r"AssertionError|ValueError", "MultiHeadAttention rejected the sizes: GPT-2 small has d_in = d_out = 768 "
         "and num_heads = 12 (head_dim = 768 // 12 = 64 is computed inside)"),
        (SHAPE_ERROR, "GPT-2 small takes 768-wide inputs of up to 1024 tokens: d_in = d_out = 768, "
         "context_length = 1024"),
    ],
    "mha": [
        (r"permute\(\): duplicate dims|permute.*does not match the length", "permute lists every axis once, in the "
         "new order: splitting the heads, (b, num_tokens, num_heads, head_dim).permute(0, 2, 1, 3) moves the heads "
         "before the tokens, the keys' transpose swaps the last two axes, and the merge moves the heads back"),
        (r"unflatten: Provided sizes", "unflatten splits one axis into the sizes given: the heads come from the last "
         "axis, .unflatten(-1, (num_heads, head_dim)), and a (b * num_heads) axis from axis 0, .unflatten(0, (b, "
         "num_heads))"),
        (r"buffer name should be a string", "register_buffer takes the buffer's name first, then the tensor" +
         fix(": self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))")),
        (r"(?i)(ValueError|AssertionError).*divisib", "the divisibility check refused sizes that divide evenly "
         "(every size the grader builds with, outside check 6.3, is a d_out that num_heads divides): raise only "
         "when num_heads does not divide d_out"),
        (NEGATIVE_SIZE, "a view or reshape was asked for a negative size (the error gives the shape and the axis): "
         "the split into heads asks for four sizes, the batch, the tokens, num_heads and head_dim (d_out shared among the heads), "
         "and the merge for three, the batch, the tokens and d_out, each a positive size read from x or the module"),
        (SHAPE_ERROR, "follow the shapes: the heads split to (b, num_heads, num_tokens, head_dim), the keys' last two "
         "axes swapped for the scores, the mask sliced to num_tokens, the heads merged back to (b, num_tokens, "
         "d_out)" + fix(": .view(b, num_tokens, num_heads, head_dim).transpose(1, 2), keys.transpose(2, 3), "
                        "[:num_tokens, :num_tokens], .transpose(1, 2).contiguous().view(b, num_tokens, d_out)")),
        (r"^AssertionError", "an assert refused sizes that divide evenly: the one check MultiHeadAttention needs is "
         "that d_out is divisible by num_heads" + fix(", assert d_out % num_heads == 0")),
    ],
}


def shape_error_hint(message: str, sizes, fallback: str = "") -> str:
    """Read the two sizes of a shape error against the drawn example's sizes (batch,
    num_tokens, ...): the mix-up they point at, or ``fallback`` with the sizes named."""
    at = re.search(r" \(raised at [^()]*\)$", fallback or "")
    where = at.group(0) if at else ""  # the student's line (core.submission.at_line), kept at the end
    found = re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", message) or \
        re.search(r"shapes cannot be multiplied \(\d+x(\d+) and (\d+)x\d+\)", message)
    if not found:
        return fallback
    a, b = int(found.group(1)), int(found.group(2))
    names = {"num_tokens": sizes.tokens, "context_length": sizes.context_length, "batch": sizes.batch,
             "d_in": sizes.d_in, "d_out": sizes.d_out}
    if sizes.num_heads > 1:
        names.update(num_heads=sizes.num_heads, head_dim=sizes.head_dim)

    def pair(x, y):
        return {a, b} == {names.get(x), names.get(y)} and names.get(x) != names.get(y)

    others = [v for n, v in names.items() if n not in ("num_tokens", "context_length")]
    if pair("num_tokens", "context_length") and sizes.tokens < sizes.context_length and \
            sizes.context_length not in others and sizes.tokens not in others:  # no other size explains them
        return Diagnosis(f"the input is shorter than the context (num_tokens={sizes.tokens}, context_length="
                         f"{sizes.context_length}) and the mask is not sliced to the input's tokens" +
                         fix(": use self.mask.bool()[:num_tokens, :num_tokens]") + where, Diagnosis.NAMED, mistake="mask_not_sliced")
    which = {v: [n for n, size in names.items() if size == v] for v in (a, b)}
    if not which[a] or not which[b]:
        return fallback
    said = " and ".join(f"{v} (= {' or '.join(which[v])})" for v in (a, b))
    if getattr(fallback, "rank", Diagnosis.GENERIC) >= Diagnosis.AMBIGUOUS:  # the step is known: keep its name
        return Diagnosis(f"the sizes {said} do not fit together; {fallback}", fallback.rank, fallback.alternatives,
                         fallback.mistake)
    # what the sizes show, never a guess at the step: two sizes can meet in several wrong ways
    if pair("num_tokens", "num_heads"):
        step = ("the token axis meets the head axis: after .view(b, num_tokens, num_heads, head_dim) the heads "
                "come first only after .transpose(1, 2)") + (f"; {fallback}" if fallback else "")
    elif pair("d_in", "d_out"):
        step = ("d_in meets d_out: a weight the wrong way round? nn.Linear(d_in, d_out) stores its weight as "
                "(d_out, d_in); a plain matrix for x @ W is (d_in, d_out)")
    else:
        step = fallback or "print the shape of each intermediate tensor"
    if where and not step.endswith(where):
        step += where
    return Diagnosis(f"the sizes {said} do not fit together; {step}", Diagnosis.GENERIC,
                     mistake="observed_sizes")
