"""The toy chapter's checks: ``double(x)`` must return ``2 * x``. Only ``autograder.core`` is used."""

import torch

from autograder.core.chapter import Stage, StageParts
from autograder.core.checks import check
from autograder.core.compare import expect_close
from autograder.core.failures import CheckFailure
from autograder.core.strategies import EXAMPLES, float_arrays, run_property

FIXED_INPUT = torch.tensor([1.0, -2.0, 3.5])


def require_function(sub, name: str):
    """The submission's function ``name``, or a failure that says what is missing."""
    kind = sub.kind(name)
    if kind == "missing":
        raise sub.not_defined(name, f"define `{name}` in the {sub.stage_label} cell and run it")
    if kind != "function":
        raise CheckFailure(f"`{name}` is a {kind}, expected a function", f"define `{name}` with `def`")
    return sub.function(name)


@check("1.1", 4, "doubles the fixed example [1, -2, 3.5]")
def fixed_example(sub):
    double = require_function(sub, "double")
    expect_close(double(FIXED_INPUT), 2 * FIXED_INPUT, "double([1, -2, 3.5])", hint="return 2 * x")


@check("1.2", 6, "doubles any tensor: the same shape, each value twice")
def doubles_any_tensor(sub):
    double = require_function(sub, "double")

    def body(array):
        x = torch.from_numpy(array.copy())
        expect_close(double(x), 2 * x.double(), f"double(x) for x of shape {list(x.shape)}",
                     hint="keep the input's shape: return 2 * x, without reshaping")

    run_property(body, float_arrays(), examples=EXAMPLES["function"])


STAGE = StageParts(Stage(1, "double", "Double a tensor", ("double",)))
