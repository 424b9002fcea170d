"""Hints for exceptions raised by the student's code, after the stage's and the chapter's tables."""

from __future__ import annotations

import re

from autograder.core.chapter import ErrorHints
from autograder.core.failures import Hint, as_hint

FLOAT_SIZE = r"tuple of ints,? ?but got float|must be tuple of ints|slice indices must be integers|" \
    r"'float' object cannot be interpreted as an integer"
NEGATIVE_SIZE = r"invalid shape dimension -\d+|negative dimension -?\d+|[Tt]rying to create tensor with negative dimension"

# the sizes in a shape mismatch: tensors that do not fit together
SHAPE_MISMATCH = r"must match the size of tensor|size mismatch|shapes cannot be multiplied|mat1 and mat2|" \
    r"Expected size|doesn't match the broadcast shape|invalid for input of size"
# and an index or dim past the tensor's axes
SHAPE_ERROR = SHAPE_MISMATCH + r"|[Dd]imension out of range"

# What an error usually means in any chapter, tried after the chapter's tables
_ERROR_HINTS: ErrorHints = [
    (r"view size is not compatible|not contiguous",
     "call .contiguous() before .view() after a transpose (or use .reshape())"),
    (NEGATIVE_SIZE, "a size in the shape asked for is negative (the error gives the shape and the axis): print "
     "the sizes the line computes; each is a positive size read from the tensors (only -1, once, asks for the size "
     "to be inferred)"),
    (SHAPE_MISMATCH, "a shape mismatch: print the shape of each intermediate tensor and compare it with the "
     "shapes in the docstring"),
    (r"expected scalar type|dtype|Float but found Double|Double but found Float",
     "mixed dtypes: keep everything float32 (torch.tensor(..., dtype=torch.float32) or x.dtype)"),
    (r"out of memory|can't allocate memory|DefaultCPUAllocator",
     "the code allocates far more memory than the task needs: check the sizes you create"),
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
    (FLOAT_SIZE, "a size is a float: sizes are whole numbers (integer division, //, not /)"),
    (r"takes .* positional argument|unexpected keyword argument|missing .* required",
     "the signature differs from the one in the stage's instructions: keep the argument names "
     "and their order"),
    (r"dimension out of range|Dimension out of range",
     "an index or dim refers to an axis the tensor does not have: count the dimensions"),
    (r"[Aa]ssertion", "an assert in your code failed on valid input"),
    (r"^RecursionError:", "a function calls itself without end"),
]


def error_hint(exc_type: str, message: str, stage_hints: ErrorHints = ()) -> Hint:
    """The hint for an exception: the stage's and chapter's table (``Chapter.error_hints``) first."""
    text = f"{exc_type}: {message}"
    for pattern, hint in [*stage_hints, *_ERROR_HINTS]:
        if re.search(pattern, text):
            return as_hint(hint)
    return Hint("read the error and the line it points to; run the stage's cell on the book's example")
