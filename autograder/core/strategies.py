"""Hypothesis strategies and the grading profile, shared by every stage of every chapter:
:func:`run_property` runs a check on drawn examples and names the smallest failing one."""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import torch
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.extra import numpy as hnp
from hypothesis.internal.conjecture import providers

from autograder.core.failures import CheckFailure, Hint, NotImplementedYet, StageAborted, StudentCodeError
from autograder.sandbox import timings

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

# Hypothesis also draws, now and then, numbers read from the source of the modules loaded from
# outside site-packages: the grader's own, which differ between a test cell's kernel and make
# test's process and change with any edit. None drawn: the same examples on every route.
if hasattr(providers, "_get_local_constants"):
    providers._get_local_constants = providers.Constants

# Examples per property: enough to cover every size class below a few times, few enough
# that a full grade stays within seconds (each example is one or two calls to the worker).
# Derandomized draws are the same every run: 6 module examples already cover 2, 3 and 4 heads,
# head_dim 1 to 3, batch 1 and more, num_tokens 1 to 6, inputs shorter than the context and
# not; every mistake of tests/catalog is caught with as few as 5/3/3 (issue 7 measured this).
EXAMPLES = {"function": 15, "module": 6, "cheap_module": 9}

# The seed of the examples drawn: None for the visible ones; the hidden tests of the
# instructor's notebook draw other examples from their own seed (engine.run_stage).
_EXAMPLES_SEED: ContextVar[int | None] = ContextVar("examples_seed", default=None)


# Set while a check runs (engine.run_stage): each read of the examples seed adds to it. A check
# that never reads the seed draws the same examples whatever it is, so a run of it on hidden
# examples would repeat its visible run request for request, and is skipped.
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
    seed = _read_examples_seed()
    return 0 if seed is None else int(seed)


class Example:
    """A drawn example of a chapter's own kind: ``str`` of it says it in plain words, and
    :meth:`read_error` reads an error of the student's code against it."""

    def read_error(self, message: str, fallback: Hint | None = None) -> Hint | None:
        """The hint for the error ``message`` the student's code raised on this example:
        by default ``fallback``, the hint the error's message alone gives."""
        return fallback


def distinct_shape(min_dims: int = 1, max_dims: int = 3, max_side: int = 6):
    return st.integers(min_dims, max_dims).flatmap(
        lambda n: st.lists(st.integers(1 if n == 1 else 2, max_side), min_size=n, max_size=n, unique=True)
        .map(tuple))


def float_arrays(shape_strategy=None, bound: float = 10.0):
    """Bounded, NaN-free float32 values, drawn element by element (shrinkable)."""
    return (shape_strategy or distinct_shape()).flatmap(
        lambda shape: hnp.arrays(np.float32, shape, elements=st.floats(
            -bound, bound, width=32, allow_nan=False, allow_infinity=False)))


def tensor(shape, seed: int, low: float = -2.0, high: float = 2.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(int(seed))
    return torch.empty(tuple(shape)).uniform_(low, high, generator=g)


def explaining() -> bool:
    """Whether a failure raised now is the one the student sees (outside a property, or in hypothesis's
    final replay): hints that take work are worked out only then, not while shrinking."""
    from hypothesis.control import current_build_context, currently_in_test_context

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
    if timings.enabled():  # counted outside prop: hypothesis derives a derandomized property's examples from its source
        uncounted = body

        def body(*args):
            timings.add("examples")
            return uncounted(*args)

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
    timings.add("properties")
    started = time.monotonic()
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
    finally:
        timings.add("property_seconds", time.monotonic() - started)


def _with_example(failure: CheckFailure, args: tuple, show_input) -> CheckFailure:
    """The failure, naming the example it came from and, for an error of the student's code,
    the hint the example reads in the error message (:meth:`Example.read_error`)."""
    parts = [describe(a, show_input) for a in args if isinstance(a, (Example, np.ndarray))]
    missing = [p for p in parts if p not in failure.message]
    if missing:
        failure.message = f"{failure.message} (smallest failing case: {'; '.join(missing)})"
    example = next((a for a in args if isinstance(a, Example)), None)
    failure.example = example
    if isinstance(failure, StudentCodeError) and example is not None:
        failure.hint = example.read_error(failure.message, failure.hint)
    return failure
