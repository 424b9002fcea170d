"""autograder.core.hints: what an exception of the student's code means, in any chapter.

``error_hint`` reads the chapter's table for the stage (its own, then the chapter's common one:
``Chapter.error_hints``) before the general one. The chapter's tables and its reading of a shape
error against its examples are tests/unit/chapters/test_hints.py.
"""

from __future__ import annotations

import pytest

from autograder.core.failures import Diagnosis
from autograder.core.hints import error_hint

BROADCAST = "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"
GENERAL_SHAPE_HINT = error_hint("RuntimeError", BROADCAST)
DEFAULT_HINT = error_hint("KeyError", "'zzz'")


# -- error_hint ---------------------------------------------------------------------------------

def test_general_table_explains_a_shape_mismatch():
    assert "shape mismatch" in GENERAL_SHAPE_HINT


def test_stage_table_comes_before_the_general_one():
    stage = [(r"must match the size", "the stage's own words")]
    assert error_hint("RuntimeError", BROADCAST, stage) == "the stage's own words"


def test_first_matching_row_of_the_stage_table_wins():
    stage = [(r"no match here", "not this"), (r"tensor a", "first match"), (r"tensor b", "second match")]
    assert error_hint("RuntimeError", BROADCAST, stage) == "first match"


def test_a_stage_table_that_does_not_match_falls_back_to_the_general_one():
    assert error_hint("RuntimeError", BROADCAST, [(r"dtype", "not this")]) == GENERAL_SHAPE_HINT


def test_the_exception_type_can_be_matched():
    stage = [(r"^ValueError", "the constructor rejected the sizes")]
    assert error_hint("ValueError", "anything", stage) == "the constructor rejected the sizes"
    assert error_hint("TypeError", "anything", stage) != "the constructor rejected the sizes"


@pytest.mark.parametrize("exc_type, message, words", [
    ("RuntimeError", "view size is not compatible with input tensor's size and stride", ".contiguous()"),
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "shape mismatch"),
    ("RuntimeError", "expected scalar type Float but found Double", "mixed dtypes"),
    ("NameError", "name 'torch' is not defined", "define it"),
    ("TypeError", "'Tensor' object is not callable", "not one"),
    ("AttributeError", "'Net' object has no attribute 'layer'", "super().__init__()"),
    ("TypeError", "'float' object cannot be interpreted as an integer", "integer division"),
    ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)", "count the dimensions"),
    ("RuntimeError", "DefaultCPUAllocator: can't allocate memory: you tried to allocate 10 GB", "memory"),
    ("TypeError", "__init__() takes 3 positional arguments but 5 were given", "signature"),
    ("AssertionError", "", "assert"),
    ("RecursionError", "maximum recursion depth exceeded", "calls itself"),
])
def test_general_table_names_the_usual_cause(exc_type, message, words):
    hint = error_hint(exc_type, message)
    assert words in hint, hint
    assert hint != DEFAULT_HINT


def test_an_unknown_error_gets_the_default_hint():
    assert "read the error" in DEFAULT_HINT


# -- levels: what is wrong at level 1, the fixing code from level 2 on ---------------------------

def test_level_one_drops_the_marked_fix_and_its_comma():
    from autograder.core.hints import at_level, fix

    hint = Diagnosis("the sums lost their axis" + fix(", exp_x.sum(dim=-1, keepdim=True)"), Diagnosis.NAMED,
                     mistake="no_keepdim")
    shown = at_level(hint, 1)
    assert shown == "the sums lost their axis"
    assert (shown.rank, shown.mistake) == (Diagnosis.NAMED, "no_keepdim")
    assert at_level(hint, 2) == "the sums lost their axis, exp_x.sum(dim=-1, keepdim=True)"


def test_level_one_leaves_no_empty_parenthesis_or_separator():
    from autograder.core.hints import at_level, fix

    assert at_level("transpose the keys (" + fix("keys.transpose(1, 2); ") + "keys.T reverses the batch)", 1) == \
        "transpose the keys (keys.T reverses the batch)"
    assert at_level("slice the mask (" + fix("mask[:n, :n]") + ") first", 1) == "slice the mask first"
    assert at_level("what is wrong: " + fix("the line"), 1) == "what is wrong"


def test_levels_of_an_ambiguous_hint_apply_to_its_alternatives():
    from autograder.core.hints import at_level, fix

    a, b = "A" + fix(": a()"), "B" + fix(": b()")
    hint = Diagnosis(f"{a}; or, as likely here: {b}", Diagnosis.AMBIGUOUS, (a, b))
    assert at_level(hint, 1).alternatives == ("A", "B")
    assert at_level(hint, 1) == "A; or, as likely here: B"


def test_the_general_table_marks_no_fixing_line():
    """Core's table is for any chapter: it says what an error means, never a chapter's code."""
    from autograder.core.hints import _ERROR_HINTS, at_level

    assert [hint for _, hint in _ERROR_HINTS if at_level(hint, 1) != at_level(hint, 2)] == []


def test_the_chapter_table_comes_between_the_stage_table_and_the_general_one():
    """Chapter.error_hints: each stage's own table, then the chapter's common one, for every stage."""
    import sys
    import types

    from autograder.core.chapter import Chapter, Stage, StageParts

    own = types.ModuleType("hints_stage_own")
    own.STAGE = StageParts(Stage(1, "own", "Own", ()), error_hints=[(r"tensor a", "the stage's own words")])
    bare = types.ModuleType("hints_stage_bare")
    bare.STAGE = StageParts(Stage(2, "bare", "Bare", ()))
    sys.modules.update({own.__name__: own, bare.__name__: bare})
    chapter = Chapter("hints", "Hints", (own.__name__, bare.__name__),
                      common_error_hints=[(r"must match the size", "the chapter's words")])
    assert error_hint("RuntimeError", BROADCAST, chapter.error_hints["own"]) == "the stage's own words"
    assert error_hint("RuntimeError", BROADCAST, chapter.error_hints["bare"]) == "the chapter's words"
    assert error_hint("KeyError", "'zzz'", chapter.error_hints["bare"]) == DEFAULT_HINT
    assert Chapter("plain", "Plain", (bare.__name__,)).error_hints == {"bare": []}
