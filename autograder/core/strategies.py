"""Hypothesis strategies and the grading profile, shared by every stage of every chapter:
:func:`run_property` runs a check on drawn examples and names the smallest failing one."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import torch
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.control import current_build_context, currently_in_test_context
from hypothesis.errors import Flaky
from hypothesis.extra import numpy as hnp
from hypothesis.internal.conjecture import providers

from autograder.core.failures import CheckFailure, Hint, NotImplementedYet, StageAborted, StudentCodeError

# One profile for grading: fixed example counts, no deadline (student code may be slow on
# its first call), derandomized, no example database: the same submission, the same grade.
GRADING = settings(
    derandomize=True,
    deadline=None,
    database=None,
    verbosity=Verbosity.quiet,
    report_multiple_bugs=False,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
)

# Hypothesis also draws numbers read from the grader's own source, which differs between routes
# and with any edit: none drawn, the same examples on every route.
if hasattr(providers, "_get_local_constants"):
    providers._get_local_constants = providers.Constants

# Examples per property: every size class a few times, a grade within seconds; every mistake
# of tests/catalog is caught with as few as 5/3/3 (issue 7 measured this).
EXAMPLES = {"function": 15, "module": 6, "cheap_module": 9}

# The seed of the examples drawn: None for the visible ones, the hidden tests' own seed for theirs.
_EXAMPLES_SEED: ContextVar[int | None] = ContextVar("examples_seed", default=None)


# Grows with each read of the examples seed while a check runs: a check that never reads it
# would repeat its visible run on hidden examples, so that run is skipped.
_SEED_READS: ContextVar[list | None] = ContextVar("seed_reads", default=None)


@contextmanager
def _set(var: ContextVar, value):
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def examples_seed(value: int | None):
    """Inside, every property draws its examples from ``value`` (None: the visible examples)."""
    return _set(_EXAMPLES_SEED, value)


def _read_examples_seed() -> int | None:
    """The one way to the examples seed: every example that depends on it is drawn after this."""
    reads = _SEED_READS.get()
    if reads is not None:
        reads.append(1)
    return _EXAMPLES_SEED.get()


def noting_seed_reads():
    """Yields a list that grows each time the code inside reads the examples seed."""
    return _set(_SEED_READS, [])


def variation_seed() -> int:
    """The seed of the variations on a fixed example (the book's input perturbed, the grader's
    weights): 0 for the visible checks, the hidden tests' own seed for nbgrader's hidden tests."""
    return int(_read_examples_seed() or 0)


class Example:
    """A drawn example of a chapter's own kind, said in plain words by ``str``."""

    def read_error(self, message: str, fallback: Hint | None = None) -> Hint | None:
        """The hint for an error the student's code raised on this example (``fallback``: the message's alone)."""
        return fallback


def distinct_shape(min_dims: int = 1, max_dims: int = 3, max_side: int = 6):
    return st.integers(min_dims, max_dims).flatmap(
        lambda n: st.lists(st.integers(1 if n == 1 else 2, max_side), min_size=n, max_size=n, unique=True)
        .map(tuple))


def float_arrays(shape_strategy=None, bound: float = 10.0):
    """Bounded, NaN-free float32 values, drawn element by element (shrinkable). They shrink toward
    a ramp 0, 0.25, 0.5, ..., not toward zeros: at zeros every exp is 1, so dividing by a mean or a
    max gives what no division gives, and the diagnosis would name the wrong mistake."""
    return (shape_strategy or distinct_shape()).flatmap(
        lambda shape: hnp.arrays(np.float32, shape, elements=st.floats(
            -bound, bound, width=32, allow_nan=False, allow_infinity=False))
        .map(lambda a: a + (np.arange(a.size, dtype=np.float32) % 8 / 4).reshape(a.shape)))


def tensor(shape, seed: int, low: float = -2.0, high: float = 2.0) -> torch.Tensor:
    return torch.empty(tuple(shape)).uniform_(low, high, generator=torch.Generator().manual_seed(int(seed)))


def explaining() -> bool:
    """Whether a failure raised now is the one the student sees (outside a property, or in hypothesis's
    final replay): hints that take work are worked out only then, not while shrinking."""
    return not currently_in_test_context() or bool(current_build_context().is_final)


def describe(value, show_input=None) -> str:
    """One drawn example in plain words: the example, and the input itself when it is small."""
    if isinstance(value, np.ndarray):
        return f"x = {value.tolist()}"
    text = str(value)
    if show_input is not None and isinstance(value, Example):
        x = show_input(value)
        if x.numel() <= 12:
            text += f"; x = {x.double().round(decimals=4).tolist()}"
    return text


def run_property(body, *strategies, examples: int, show_input=None) -> None:
    """Run ``body`` on drawn examples and re-raise the failure of the smallest failing one, naming it
    (and ``show_input(example)`` when that is small); a stopped worker or a stub ends the search at once."""

    class _Stop(BaseException):
        def __init__(self, exc):
            self.exc = exc

    failing: list = []
    @settings(GRADING, max_examples=examples)
    @given(st.tuples(*strategies))
    def prop(args):
        try:
            body(*args)
        except (StageAborted, NotImplementedYet) as exc:
            raise _Stop(exc) from None
        except CheckFailure:
            failing[:] = [args]  # hypothesis replays the smallest failing example last
            raise

    seed = _read_examples_seed()
    if seed is not None:
        prop = hypothesis_seed(seed)(prop)
    try:
        prop()
    except _Stop as stop:
        raise stop.exc from None
    except CheckFailure as failure:
        raise _with_example(failure, failing[0] if failing else (), show_input) from None
    except Flaky:
        example = f" ({describe(failing[0][0])})" if failing and failing[0] else ""
        raise CheckFailure(
            f"the same input failed once and passed the next time{example}",
            "the output must depend only on the input and the weights: no torch.rand or "
            "hand-made dropout in forward, and no state kept between calls") from None


def _with_example(failure: CheckFailure, args: tuple, show_input) -> CheckFailure:
    """The failure, naming its example; an error of the student's code as the example reads it."""
    parts = [describe(a, show_input) for a in args if isinstance(a, (Example, np.ndarray))]
    missing = [p for p in parts if p not in failure.message]
    if missing:
        failure.message = f"{failure.message} (smallest failing case: {'; '.join(missing)})"
    example = next((a for a in args if isinstance(a, Example)), None)
    failure.example = example
    if isinstance(failure, StudentCodeError) and example is not None:
        failure.hint = example.read_error(failure.message, failure.hint)
    return failure
