"""What an exception usually means in any stage of this chapter (each stage module holds its
own table), and what the sizes in a shape error say about the drawn example."""

from __future__ import annotations

import re
from dataclasses import replace

from autograder.core.chapter import ErrorHints
from autograder.core.failures import AMBIGUOUS, NAMED, Hint
from autograder.core.hints import FLOAT_SIZE, SHAPE_MISMATCH

# tried after the stage's own table and before core's general one, whose entries they word for attention
COMMON_ERROR_HINTS: ErrorHints = [
    (SHAPE_MISMATCH,
     "a shape mismatch: print the shape of each intermediate tensor (queries, keys, "
     "attn_scores, ...) and compare it with the shapes in the docstring"),
    (r"only supports boolean masks|expected .*Bool.*mask|mask .*must be .*bool",
     Hint("masked_fill needs a boolean mask", "self.mask.bool()[:num_tokens, :num_tokens]")),
    (r"(?i:expected .*same device)|on the expected device|device type",
     "a tensor lives on another device than the input: register the mask with "
     "self.register_buffer(...) and create new tensors with device=x.device"),
    (r"out of memory|can't allocate memory|DefaultCPUAllocator",
     "the code allocates far more memory than attention needs: check the sizes you create"),
    (FLOAT_SIZE,
     Hint("a size is a float: sizes are whole numbers (integer division, //, not /)", "head_dim = d_out // num_heads")),
    (r"dimension out of range|Dimension out of range",
     "an index or dim refers to an axis the tensor does not have: count the dimensions "
     "(batch, tokens, features)"),
]


def shape_error_hint(message: str, sizes, fallback: Hint | None = None) -> Hint | None:
    """Read the two sizes of a shape error against the drawn example's sizes (batch,
    num_tokens, ...): the mix-up they point at, or ``fallback`` with the sizes named."""
    found = re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", message) or \
        re.search(r"shapes cannot be multiplied \(\d+x(\d+) and (\d+)x\d+\)", message)
    if not found:
        return fallback
    where = fallback.raised_at if fallback else ""  # the student's line (core.submission.at_line)
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
        return Hint(f"the input is shorter than the context (num_tokens={sizes.tokens}, context_length="
                    f"{sizes.context_length}) and the mask is not sliced to the input's tokens",
                    "use self.mask.bool()[:num_tokens, :num_tokens]", rank=NAMED, mistake="mask_not_sliced",
                    raised_at=where)
    which = {v: [n for n, size in names.items() if size == v] for v in (a, b)}
    if not which[a] or not which[b]:
        return fallback
    said = " and ".join(f"{v} (= {' or '.join(which[v])})" for v in (a, b))
    said = f"the sizes {said} do not fit together; "
    if fallback and fallback.rank >= AMBIGUOUS:  # the step is known: keep its name
        return replace(fallback, what=said + fallback.what)
    # what the sizes show, never a guess at the step: two sizes can meet in several wrong ways
    fix = fallback.fix if fallback else ""
    if pair("num_tokens", "num_heads"):
        step = ("the token axis meets the head axis: after .view(b, num_tokens, num_heads, head_dim) the heads "
                "come first only after .transpose(1, 2)") + (f"; {fallback.what}" if fallback else "")
    elif pair("d_in", "d_out"):
        step, fix = ("d_in meets d_out: a weight the wrong way round? nn.Linear(d_in, d_out) stores its weight as "
                     "(d_out, d_in); a plain matrix for x @ W is (d_in, d_out)"), ""
    else:
        step = fallback.what if fallback else "print the shape of each intermediate tensor"
    return Hint(said + step, fix, mistake="observed_sizes", raised_at=where)
