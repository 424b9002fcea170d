"""autograder.core.compare: the tolerances accept float32 rounding and reject real differences;
failure messages name the shape, the dtype, NaN and where the values differ."""

from __future__ import annotations

import pytest
import torch

from autograder.core.compare import BOOK, EXACT, FLOAT32, close, expect_close, expect_shape, fmt
from autograder.core.failures import GENERIC, NAMED, CheckFailure, Hint


def float64_reference(seed: int = 0, shape=(3, 4)) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * 3


def test_float32_rounding_of_a_float64_reference_is_close():
    expected = float64_reference()
    assert close(expected.float(), expected)
    expect_close(expected.float(), expected, "out")  # raises on failure


def test_float32_arithmetic_noise_is_close():
    """The same attention-like computation in float32 and in float64."""
    x = float64_reference(1, (5, 8)) / 3
    w = float64_reference(2, (8, 8)) / 3

    def attention(x, w):
        queries = x @ w
        return torch.softmax(queries @ x.T / 8 ** 0.5, -1) @ x

    expected, actual = attention(x, w), attention(x.float(), w.float())
    assert not torch.equal(actual.double(), expected)  # there is noise to tolerate
    assert close(actual, expected, FLOAT32)


@pytest.mark.parametrize("tol", [FLOAT32, EXACT, BOOK], ids=["FLOAT32", "EXACT", "BOOK"])
def test_a_real_difference_is_not_close(tol):
    expected = float64_reference()
    actual = expected.clone()
    actual[1, 2] += 1e-3
    assert not close(actual, expected, tol)


def test_float32_tolerance_scales_with_the_value():
    big = torch.tensor([1000.0], dtype=torch.float64)
    assert close(big + 0.05, big, FLOAT32)  # relative 5e-5 < rtol 1e-4
    assert not close(big + 0.2, big, FLOAT32)


def test_book_tolerance_is_absolute_four_decimals():
    printed = torch.tensor([0.4419, 0.6515], dtype=torch.float64)
    assert close(printed + 4e-5, printed, BOOK)
    assert not close(printed + 2e-4, printed, BOOK)


def test_close_refuses_another_shape_even_when_broadcastable():
    expected = torch.zeros(2, 3)
    assert not close(torch.zeros(3), expected)
    assert not close(torch.zeros(1, 2, 3), expected)


def test_close_refuses_what_is_not_a_tensor():
    assert not close([[0.0, 0.0]], torch.zeros(1, 2))


def test_nan_matches_nan_in_the_same_place_only():
    expected = torch.tensor([1.0, float("nan")])
    assert close(torch.tensor([1.0, float("nan")]), expected)
    assert not close(torch.tensor([float("nan"), 1.0]), expected)


def test_shape_mismatch_message_names_both_shapes():
    with pytest.raises(CheckFailure, match=r"out has shape \[3, 2\], expected \[2, 3\]") as info:
        expect_close(torch.zeros(3, 2), torch.zeros(2, 3), "out")
    assert info.value.hint  # a default hint about shapes


def test_shape_mismatch_keeps_the_checks_hint():
    with pytest.raises(CheckFailure) as info:
        expect_shape(torch.zeros(4), (2, 2), "weights", "use keepdim=True")
    # an observation (the shapes), then the check's advice; never ranked as a named mistake
    assert info.value.hint.what.endswith("use keepdim=True") and "[4] where [2, 2]" in info.value.hint.what
    assert info.value.hint.rank == GENERIC and info.value.hint.mistake == "observed_shape"


def test_shape_mismatch_keeps_a_named_diagnosis_as_it_is():
    named = Hint("named", rank=NAMED, mistake="m")
    with pytest.raises(CheckFailure) as info:
        expect_shape(torch.zeros(4), (2, 2), "weights", named)
    assert info.value.hint is named


def test_wrong_dtype_is_named():
    with pytest.raises(CheckFailure, match="has dtype torch.float64, expected torch.float32"):
        expect_close(torch.zeros(2, dtype=torch.float64), torch.zeros(2), "out")


def test_dtype_is_not_checked_when_none_is_asked():
    expect_close(torch.zeros(2, dtype=torch.float64), torch.zeros(2), "out", dtype=None)


def test_nan_where_a_value_is_expected_is_named_with_its_index():
    actual = torch.tensor([[0.5, 0.5], [float("nan"), 1.0]])
    with pytest.raises(CheckFailure, match=r"out contains NaN \(first at index \[1, 0\]\)") as info:
        expect_close(actual, torch.tensor([[0.5, 0.5], [0.0, 1.0]]), "out")
    # an observation, not a guess at the cause
    assert "index [1, 0]" in info.value.hint.text() and info.value.hint.mistake == "observed_nan"


def test_inf_where_a_value_is_expected_is_named():
    with pytest.raises(CheckFailure, match="contains inf"):
        expect_close(torch.tensor([float("inf"), 1.0]), torch.tensor([0.0, 1.0]), "out")


def test_expected_nan_is_accepted_in_the_same_place():
    expect_close(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]), "out")


def test_difference_message_points_at_the_largest_difference():
    expected = torch.zeros(2, 3, dtype=torch.float64)
    actual = torch.zeros(2, 3)
    actual[0, 1], actual[1, 2] = 0.01, 0.5
    with pytest.raises(CheckFailure) as info:
        expect_close(actual, expected, "context", hint="scale the scores")
    message = info.value.message
    assert "largest difference 0.5 at index [1, 2]" in message, message
    assert "(got 0.5, expected 0)" in message, message
    assert "got [[0.0, 0.01, 0.0], [0.0, 0.0, 0.5]]" in message, message  # small tensors shown whole
    assert info.value.hint == Hint("scale the scores")


def test_a_large_tensor_is_not_printed_whole():
    expected = torch.zeros(10, 10)
    actual = expected.clone()
    actual[9, 9] = 1.0
    with pytest.raises(CheckFailure) as info:
        expect_close(actual, expected, "out")
    assert "at index [9, 9]" in info.value.message
    assert "got [[" not in info.value.message


def test_a_non_tensor_is_named():
    with pytest.raises(CheckFailure, match="out is a list, expected a torch.Tensor"):
        expect_close([1.0, 2.0], torch.zeros(2), "out")


def test_got_and_expected_show_the_row_that_differs_with_ellipses():
    t = torch.arange(24.0).reshape(2, 6, 2)
    assert fmt(t) == "[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], ...]"
    assert fmt(t, around=10) == "[..., [16.0, 17.0], [18.0, 19.0], [20.0, 21.0], [22.0, 23.0]]"
    assert fmt(torch.arange(6.0).reshape(3, 2)) == "[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]"
