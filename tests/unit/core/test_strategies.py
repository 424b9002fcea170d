"""autograder.core.strategies: the derandomized hypothesis profile and what a property failure
says (grading the same notebook twice is tests/e2e/test_determinism.py)."""

from __future__ import annotations

import ast

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

from autograder.core.failures import CheckFailure
from autograder.core.strategies import GRADING, Sizes, attention_sizes, float_arrays, run_property


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


def test_module_failures_name_their_sizes():
    def too_many_tokens(sizes: Sizes):
        if sizes.tokens > 2:
            raise CheckFailure("too many tokens")

    with pytest.raises(CheckFailure) as failure:
        run_property(too_many_tokens, attention_sizes(), examples=30,
                     show_input=lambda s: torch.zeros(s.tokens, s.d_in))
    message = failure.value.message
    # shrunk to the smallest failing size; the input is shown only when it is small
    assert "(smallest failing case: batch=" in message and "num_tokens=3," in message, message


def test_a_result_that_changes_between_runs_is_named():
    seen = set()

    def fails_only_the_first_time(value):
        if value not in seen:
            seen.add(value)
            raise CheckFailure("failed")

    with pytest.raises(CheckFailure) as failure:
        run_property(fails_only_the_first_time, st.integers(0, 10), examples=20)
    assert "failed once and passed the next time" in failure.value.message
