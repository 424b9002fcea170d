"""autograder.core.strategies: the derandomized hypothesis profile and what a property failure
says (grading the same notebook twice is tests/e2e/test_determinism.py)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

from autograder.core.failures import CheckFailure, Hint, StudentCodeError
from autograder.core.strategies import GRADING, Example, float_arrays, run_property


@dataclass(frozen=True)
class Rows(Example):
    """A chapter's own kind of example: here, rows of a table."""
    rows: int
    width: int

    def __str__(self) -> str:
        return f"rows={self.rows}, width={self.width}"

    def read_error(self, message: str, fallback: Hint | None = None) -> Hint | None:
        return replace(fallback, what=f"{self.rows} rows: {fallback.what}") if "rows" in message else fallback


rows = st.builds(Rows, st.integers(1, 6), st.integers(1, 6))


def _fails_on_large_values(array):
    if (np.abs(array) > 2).any():
        raise CheckFailure("a value above 2 got through", "keep values small")


def test_grading_profile_is_derandomized():
    assert GRADING.derandomize and GRADING.database is None and GRADING.deadline is None


def test_a_property_failure_names_its_smallest_example():
    """Hypothesis shrinks the failing input; the message says it in words, no traceback."""
    with pytest.raises(CheckFailure) as first:
        run_property(_fails_on_large_values, float_arrays(), examples=50)
    with pytest.raises(CheckFailure) as second:
        run_property(_fails_on_large_values, float_arrays(), examples=50)
    message = first.value.message
    assert message == second.value.message
    assert "smallest failing case: x = [" in message
    shown = np.array(ast.literal_eval(message.split("x = ", 1)[1].rstrip(")")))  # a plain list
    assert shown.size == 1 and np.abs(shown).max() > 2, message  # shrunk to one value


def test_failures_name_their_example():
    def too_many_rows(example: Rows):
        if example.rows > 2:
            raise CheckFailure("too many rows")

    with pytest.raises(CheckFailure) as failure:
        run_property(too_many_rows, rows, examples=30, show_input=lambda e: torch.zeros(e.rows, e.width))
    message = failure.value.message
    # shrunk to the smallest failing example; the input is shown only when it is small
    assert message.startswith("too many rows (smallest failing case: rows=3, width=1; x = [[0.0], [0.0], [0.0]]"), \
        message
    assert failure.value.example == Rows(3, 1)


def test_an_error_of_the_students_code_is_read_by_its_example():
    def raises(example: Rows):
        raise StudentCodeError("IndexError: too many rows", "the message's own hint")

    with pytest.raises(StudentCodeError) as failure:
        run_property(raises, rows, examples=5)
    assert failure.value.hint == Hint("1 rows: the message's own hint")
    with pytest.raises(StudentCodeError) as plain:  # Example's default: the message's own hint
        run_property(lambda value: raises(None), st.integers(0, 3), examples=5)
    assert plain.value.hint == Hint("the message's own hint") and plain.value.example is None


def test_a_result_that_changes_between_runs_is_named():
    seen = set()

    def fails_only_the_first_time(value):
        if value not in seen:
            seen.add(value)
            raise CheckFailure("failed")

    with pytest.raises(CheckFailure) as failure:
        run_property(fails_only_the_first_time, st.integers(0, 10), examples=20)
    assert "failed once and passed the next time" in failure.value.message


def test_the_examples_drawn_owe_nothing_to_the_numbers_in_the_graders_source():
    """Hypothesis would draw numbers read from the loaded modules outside site-packages (the
    grader's own, editable here): they differ between a test cell's kernel and make test's process."""
    from hypothesis.internal.conjecture import providers

    import autograder.chapters.ch03_attention.checks.s7_gpt2  # noqa: F401 - holds 2_360_064 and 1024

    constants = providers._get_local_constants()
    assert not (constants.integers or constants.floats or constants.strings)
