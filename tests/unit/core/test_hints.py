"""autograder.core.hints: what an exception of the student's code means, in any chapter.

``error_hint`` reads the chapter's table for the stage (its own, then the chapter's common one:
``Chapter.error_hints``) before the general one. The chapter's tables and its reading of a shape
error against its examples are tests/unit/chapters/test_hints.py.
"""

from __future__ import annotations

import pickle

import pytest

from autograder.core.failures import AMBIGUOUS, NAMED, Hint
from autograder.core.hints import error_hint

BROADCAST = "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"
GENERAL_SHAPE_HINT = error_hint("RuntimeError", BROADCAST).text()
DEFAULT_HINT = error_hint("KeyError", "'zzz'").text()


# -- error_hint ---------------------------------------------------------------------------------

def test_general_table_explains_a_shape_mismatch():
    assert "shape mismatch" in GENERAL_SHAPE_HINT


def test_stage_table_comes_before_the_general_one():
    stage = [(r"must match the size", "the stage's own words")]
    assert error_hint("RuntimeError", BROADCAST, stage) == Hint("the stage's own words")


def test_first_matching_row_of_the_stage_table_wins():
    stage = [(r"no match here", "not this"), (r"tensor a", "first match"), (r"tensor b", "second match")]
    assert error_hint("RuntimeError", BROADCAST, stage).text() == "first match"


def test_a_stage_table_that_does_not_match_falls_back_to_the_general_one():
    assert error_hint("RuntimeError", BROADCAST, [(r"dtype", "not this")]).text() == GENERAL_SHAPE_HINT


def test_the_exception_type_can_be_matched():
    stage = [(r"^ValueError", "the constructor rejected the sizes")]
    assert error_hint("ValueError", "anything", stage).text() == "the constructor rejected the sizes"
    assert error_hint("TypeError", "anything", stage).text() != "the constructor rejected the sizes"


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
    hint = error_hint(exc_type, message).text()
    assert words in hint, hint
    assert hint != DEFAULT_HINT


def test_an_unknown_error_gets_the_default_hint():
    assert "read the error" in DEFAULT_HINT


# -- levels: what is wrong at level 1, the fixing code from level 2 on ---------------------------

def test_level_one_says_what_is_wrong_and_level_two_adds_the_fix():
    hint = Hint("the sums lost their axis", "exp_x.sum(dim=-1, keepdim=True)", "no_keepdim", NAMED)
    assert hint.text(1) == "the sums lost their axis"
    assert hint.text(2) == "the sums lost their axis: exp_x.sum(dim=-1, keepdim=True)"
    assert Hint("what is wrong").text(2) == "what is wrong"


def test_the_line_that_raised_comes_last_at_every_level():
    hint = Hint("slice the mask", "mask[:n, :n]", raised_at="cell 4, line 2, in forward")
    assert hint.text(1) == "slice the mask (raised at cell 4, line 2, in forward)"
    assert hint.text(2) == "slice the mask: mask[:n, :n] (raised at cell 4, line 2, in forward)"


def test_levels_of_an_ambiguous_hint_apply_to_its_first_two_alternatives():
    a, b, c = Hint("A", "a()", "a", NAMED), Hint("B", "b()", "b", NAMED), Hint("C", "c()", "c", NAMED)
    hint = Hint("", rank=AMBIGUOUS, alternatives=(a, b, c), mistake="a|b")
    assert hint.text(1) == "A; or, as likely here: B"
    assert hint.text(2) == "A: a(); or, as likely here: B: b()"
    assert Hint("the sizes do not fit; ", rank=AMBIGUOUS, alternatives=(a, b)).text(1) == \
        "the sizes do not fit; A; or, as likely here: B"


def test_a_hint_crosses_processes_whole():
    hint = Hint("", rank=AMBIGUOUS, alternatives=(Hint("A", "a()", "a", NAMED), Hint("B")), raised_at="cell 2")
    assert pickle.loads(pickle.dumps(hint)) == hint


def test_the_general_table_marks_no_fixing_line():
    """Core's table is for any chapter: it says what an error means, never a chapter's code."""
    from autograder.core.hints import _ERROR_HINTS

    assert all(isinstance(hint, str) for _, hint in _ERROR_HINTS)


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
    assert error_hint("RuntimeError", BROADCAST, chapter.error_hints["own"]).text() == "the stage's own words"
    assert error_hint("RuntimeError", BROADCAST, chapter.error_hints["bare"]).text() == "the chapter's words"
    assert error_hint("KeyError", "'zzz'", chapter.error_hints["bare"]).text() == DEFAULT_HINT
    assert Chapter("plain", "Plain", (bare.__name__,)).error_hints == {"bare": []}
