"""The one comparison helper and the tolerances, documented in one place."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from autograder.core.failures import CheckFailure, Hint, as_hint


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


# The book prints four decimals, so a correct value lies within 5e-5 of the print;
# 1e-4 leaves room for float32 rounding on other platforms.
BOOK = Tolerance(rtol=0.0, atol=1e-4)
# float32 student output against a float64 reference built from the same weights.
FLOAT32 = Tolerance(rtol=1e-4, atol=2e-5)
# Reference computations of two float32 pipelines that should agree exactly up to rounding.
EXACT = Tolerance(rtol=1e-5, atol=1e-6)


def fmt(t: torch.Tensor, rows: int = 4, around: int | None = None) -> str:
    """A compact picture of a tensor: at most ``rows`` rows, those around row ``around`` when given."""
    t = t.detach().to("cpu")
    if t.dim() >= 2:
        flat = t.reshape(-1, t.shape[-1])
        start = 0 if around is None else min(max(around - rows // 2, 0), max(len(flat) - rows, 0))
        shown = flat[start:start + rows]
        if len(shown) < len(flat) and shown.numel() <= 64:
            body = ", ".join(repr(r) for r in shown.double().round(decimals=4).tolist())
            return "[" + ("..., " if start else "") + body + (", ..." if start + rows < len(flat) else "") + "]"
        t = shown
    return repr(t.double().round(decimals=4).tolist()) if t.numel() <= 64 else (
        f"tensor of shape {list(t.shape)}, first values {t.flatten()[:6].double().round(decimals=4).tolist()}")


def expect_shape(actual: torch.Tensor, shape, what: str, hint: Hint | str = "") -> None:
    """The shape; a wrong one is an observation (``observed_shape``): the shapes, then the
    stage's advice, unless the caller's hint names a mistake it has evidence for."""
    if tuple(actual.shape) != tuple(shape):
        hint = as_hint(hint) or Hint("compare each dimension with the shapes in the docstring")
        if not hint.mistake:
            hint = replace(hint, what=f"the output has shape {list(actual.shape)} where {list(shape)} is expected: "
                                      f"{hint.what}", mistake="observed_shape")
        raise CheckFailure(f"{what} has shape {list(actual.shape)}, expected {list(shape)}", hint)


def expect_close(actual: torch.Tensor, expected: torch.Tensor, what: str, *, hint: Hint | str = "",
                 tol: Tolerance = FLOAT32, dtype: torch.dtype | None = torch.float32) -> None:
    """Exact shape and dtype first, then NaN/inf, then values; the message shows both tensors."""
    if not isinstance(actual, torch.Tensor):
        raise CheckFailure(f"{what} is a {type(actual).__name__}, expected a torch.Tensor")
    expect_shape(actual, expected.shape, what, hint)
    if dtype is not None and actual.dtype != dtype:
        raise CheckFailure(f"{what} has dtype {actual.dtype}, expected {dtype}",
                           "keep the input's dtype: avoid float64 constants, NumPy and Python lists")
    actual64, expected64 = actual.double(), expected.double()
    bad = ~torch.isfinite(actual64) & torch.isfinite(expected64)
    if bad.any():
        where = bad.nonzero()[0].tolist()
        kind = 'NaN' if actual64.isnan().any() else 'inf'
        raise CheckFailure(f"{what} contains {kind} (first at index {where})", hint or Hint(
            f"the output has {kind} where the expected values are finite (first at index {where}): print the "
            "intermediate tensors (scores, masked scores, weights) to find the first step that gives "
            f"{kind}", mistake=f"observed_{kind.lower()}"))
    if not torch.allclose(actual64, expected64, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
        diff = (actual64 - expected64).abs().nan_to_num(0.0)
        flat = int(diff.argmax())
        # not torch.unravel_index: it imports sympy on first use (seconds, after student code has run)
        at = tuple(int(i) for i in np.unravel_index(flat, diff.shape))
        where = f" at index {list(at)}" if at else ""
        # small tensors are shown whole (four rows at most), around the row of the largest difference
        row = flat // actual.shape[-1] if len(at) > 1 else None
        values = f"; got {fmt(actual, around=row)}, expected {fmt(expected, around=row)}" if actual.numel() <= 64 else ""
        raise CheckFailure(
            f"{what} differs from the expected values: largest difference {diff.max().item():.4g}{where} "
            f"(got {actual64[at].item():.4g}, expected {expected64[at].item():.4g}){values}", hint)


def close(a: torch.Tensor, b: torch.Tensor, tol: Tolerance = FLOAT32) -> bool:
    return (isinstance(a, torch.Tensor) and tuple(a.shape) == tuple(b.shape)
            and torch.allclose(a.double(), b.double(), rtol=tol.rtol, atol=tol.atol, equal_nan=True))
