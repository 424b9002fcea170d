"""Hints for exceptions raised by the student's code: the message names the likely cause.

Three layers, most specific first: what the sizes in a shape error say about the drawn example
(:func:`shape_error_hint`), what an error usually means in the stage the student is working
on (the chapter's ``error_hints``), and what it usually means anywhere (``_ERROR_HINTS``).
"""

from __future__ import annotations

import re

from autograder.core.chapter import ErrorHints
from autograder.core.failures import Diagnosis

# -- levels -----------------------------------------------------------------------------------
# A hint says what is wrong; the code that fixes it is marked with fix() and shown only from
# hint level 2 on (autograder.core.settings): at level 1 the student finds the line.
FIX_START, FIX_END = "\u27e6", "\u27e7"
_MARKED_FIX = re.compile(r"[,;:]?\s*" + FIX_START + "[^" + FIX_END + "]*" + FIX_END)


def fix(text: str) -> str:
    """``text`` (the fixing code, with any words that lead into it) shown from level 2 on."""
    return f"{FIX_START}{text}{FIX_END}"


def at_level(hint: str, level: int) -> str:
    """``hint`` as the student reads it at ``level``: level 1 drops every marked fix (and the
    comma or colon before it), level 2 keeps them; a Diagnosis keeps its rank and mistake."""
    if not hint or FIX_START not in hint:
        return hint
    if level >= 2:
        text = hint.replace(FIX_START, "").replace(FIX_END, "")
    else:
        text = _MARKED_FIX.sub("", hint)
        text = re.sub(r"\(\s*[,;:]?\s*\)", "", text)  # a parenthesis left empty
        text = re.sub(r"\(\s*[,;:]\s*", "(", text)
        text = re.sub(r"\s+([,;:)])", r"\1", text)
        text = re.sub(r"([,;:])(?=[,;:])", "", text)
        text = re.sub(r" {2,}", " ", text).strip()
        text = re.sub(r"[,;:]$", "", text).strip()
    if isinstance(hint, Diagnosis):
        return Diagnosis(text, hint.rank, tuple(at_level(a, level) for a in hint.alternatives), hint.mistake)
    return text


NEGATIVE_SIZE = r"invalid shape dimension -\d+|negative dimension -?\d+|[Tt]rying to create tensor with negative dimension"

_ERROR_HINTS: list[tuple[str, str]] = [
    (r"view size is not compatible|not contiguous",
     "call .contiguous() before .view() after a transpose (or use .reshape())"),
    (NEGATIVE_SIZE, "a size in the shape asked for is negative (the error gives the shape and the axis): print "
     "the sizes the line computes; each is a positive size read from the tensors (only -1, once, asks for the size "
     "to be inferred)"),
    (r"must match the size of tensor|size mismatch|shapes cannot be multiplied|mat1 and mat2|"
     r"Expected size|doesn't match the broadcast shape|invalid for input of size",
     "a shape mismatch: print the shape of each intermediate tensor (queries, keys, "
     "attn_scores, ...) and compare it with the shapes in the docstring"),
    (r"only supports boolean masks|expected .*Bool.*mask|mask .*must be .*bool",
     "masked_fill needs a boolean mask" + fix(": self.mask.bool()[:num_tokens, :num_tokens]")),
    (r"(?i:expected .*same device)|on the expected device|device type",
     "a tensor lives on another device than the input: register the mask with "
     "self.register_buffer(...) and create new tensors with device=x.device"),
    (r"expected scalar type|dtype|Float but found Double|Double but found Float",
     "mixed dtypes: keep everything float32 (torch.tensor(..., dtype=torch.float32) or x.dtype)"),
    (r"out of memory|can't allocate memory|DefaultCPUAllocator",
     "the code allocates far more memory than attention needs: check the sizes you create"),
    (r"is not defined", "the code uses a name it does not define: define it inside the function "
     "or the class, or run the cell that defines it; a name defined in a cell further down does not "
     "exist yet when this stage's test cell runs (make test runs the whole notebook first and may find "
     "it): move that definition above the test cell"),
    (r"object is not callable", "something is called like a function but is not one "
     "(a tensor where a layer was expected?)"),
    (r"'(Tensor|int|float|tuple|list|NoneType|Size)' object has no attribute",
     "a method is called on a value that does not have it (a tensor, a number or a tuple where the line "
     "expects something else): print the type of each name on the line the error points to"),
    (r"has no attribute", "the module has no such attribute: __init__ did not set it under that name "
     "(did you call super().__init__()?), or forward reads a name the stage does not ask for"),
    (r"__init__\(\) takes 1 positional argument",
     "the class's __init__ takes no arguments besides self: is it spelt `def __init__(self, ...)`, with two "
     "underscores on each side, and does it take the stage's arguments? (a misspelt __init__ leaves nn.Module's own)"),
    (r"tuple of ints,? ?but got float|must be tuple of ints|slice indices must be integers|"
     r"'float' object cannot be interpreted as an integer",
     "a size is a float: sizes are whole numbers (integer division, //, not /)" +
     fix(", head_dim = d_out // num_heads")),
    (r"takes .* positional argument|unexpected keyword argument|missing .* required",
     "the signature differs from the one in the stage's instructions: keep the argument names "
     "and their order"),
    (r"dimension out of range|Dimension out of range",
     "an index or dim refers to an axis the tensor does not have: count the dimensions "
     "(batch, tokens, features)"),
    (r"[Aa]ssertion", "an assert in your code failed on valid input"),
]


SHAPE_ERROR = r"must match the size|size mismatch|shapes cannot be multiplied|mat1 and mat2|Expected size|" \
               r"doesn't match the broadcast shape|invalid for input of size|[Dd]imension out of range"

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


def error_hint(exc_type: str, message: str, stage_hints: ErrorHints = ()) -> str:
    """The hint for an exception: the stage's own table first (the chapter's ``error_hints``),
    then what the error usually means anywhere."""
    text = f"{exc_type}: {message}"
    for pattern, hint in stage_hints:
        if re.search(pattern, text):
            return hint
    for pattern, hint in _ERROR_HINTS:
        if re.search(pattern, text):
            return hint
    if exc_type == "RecursionError":
        return "a function calls itself without end"
    return "read the error and the line it points to; run the stage's cell on the book's example"

