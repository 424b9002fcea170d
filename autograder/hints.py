"""Hints for exceptions raised by the student's code: the message names the likely cause."""

from __future__ import annotations

import re

_ERROR_HINTS: list[tuple[str, str]] = [
    (r"view size is not compatible|not contiguous",
     "call .contiguous() before .view() after a transpose (or use .reshape())"),
    (r"must match the size of tensor|size mismatch|shapes cannot be multiplied|mat1 and mat2|"
     r"Expected size|doesn't match the broadcast shape|invalid for input of size",
     "a shape mismatch: print the shape of each intermediate tensor (queries, keys, "
     "attn_scores, ...) and compare it with the shapes in the docstring"),
    (r"expected .*same device|on the expected device|device type",
     "a tensor lives on another device than the input: register the mask with "
     "self.register_buffer(...) and create new tensors with device=x.device"),
    (r"expected scalar type|dtype|Float but found Double|Double but found Float",
     "mixed dtypes: keep everything float32 (torch.tensor(..., dtype=torch.float32) or x.dtype)"),
    (r"out of memory|can't allocate memory|DefaultCPUAllocator",
     "the code allocates far more memory than attention needs: check the sizes you create"),
    (r"is not defined", "the code uses a name it does not define: define it inside the function "
     "or the class, or run the cell that defines it"),
    (r"object is not callable", "something is called like a function but is not one "
     "(a tensor where a layer was expected?)"),
    (r"has no attribute", "an attribute name differs from the one the stage asks for, or "
     "__init__ did not set it (did you call super().__init__()?)"),
    (r"takes .* positional argument|unexpected keyword argument|missing .* required",
     "the signature differs from the one in the stage's instructions: keep the argument names "
     "and their order"),
    (r"dimension out of range|Dimension out of range",
     "an index or dim refers to an axis the tensor does not have: count the dimensions "
     "(batch, tokens, features)"),
    (r"[Aa]ssertion", "an assert in your code failed on valid input"),
]


def error_hint(exc_type: str, message: str) -> str:
    text = f"{exc_type}: {message}"
    for pattern, hint in _ERROR_HINTS:
        if re.search(pattern, text):
            return hint
    if exc_type == "RecursionError":
        return "a function calls itself without end"
    return "read the error and the line it points to; run the stage's cell on the book's example"
