"""The module contract (:class:`ModuleSpec`) and the grader's weights, shared by the module stages."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace

import torch

from autograder.chapters.ch03_attention import book
from autograder.chapters.ch03_attention.examples import Sizes
from autograder.chapters.ch03_attention.programs import Program
from autograder.core.compare import EXACT, FLOAT32, close
from autograder.core.failures import NAMED, CheckFailure, Hint, NotImplementedYet, StudentCodeError
from autograder.core.strategies import tensor


def require(sub, name: str, kind: str):
    """The student's ``name``, which must be a ``kind`` ("function" or "class")."""
    found = sub.kind(name)
    if found == "missing":
        label = f" in the {sub.stage_label} cell" if sub.stage_label else ""
        raise sub.not_defined(name, f"define `{name}`{label} (exact name, case matters) and run that cell")
    if found != kind and not (kind == "function" and found == "class"):
        raise CheckFailure(f"`{name}` is a {found}, expected a {kind}",
                           f"define `{name}` with `{'def' if kind == 'function' else 'class'}`")
    return sub.function(name) if kind == "function" else name


@dataclass(frozen=True)
class BookCall:
    """The book's fixed-seed call of a module, on the book's input: its constructor's arguments."""

    sizes: Sizes
    args: tuple
    seed: int
    num_heads: int | None = None


@dataclass
class ModuleSpec:
    """How to build one of the student's modules for given sizes, and what it must output."""

    name: str
    book: BookCall
    batched: bool
    causal: bool
    args: Callable[[Sizes], tuple]
    reference: Callable[[dict, torch.Tensor, Sizes, str | None], torch.Tensor]
    mistakes: dict[str, Hint | str]
    value_heads: Callable[[Sizes], list[str]]  # weight names that produce the values
    identity_out_proj: bool = False
    v1_style: bool = False  # parameters are (d_in, d_out) matrices, not nn.Linear
    multi_head: bool = False  # built with num_heads: told of the heads in the sizes it is built with
    # said when a weight the contract names is missing: a hint, or one of the missing name and those present
    structure_hint: Hint | str | Callable[[str, set], Hint | str] = \
        Hint("create W_query, W_key, W_value as nn.Linear layers from d_in to d_out", "nn.Linear(d_in, d_out, bias=qkv_bias)")
    shape_hint: Hint | str = ""  # said when the output has the wrong shape
    program: Program | None = None  # the computation step by step: program(state, x, context_length, num_heads)

    def build(self, sub, sizes: Sizes, *, dropout: float | None = None):
        args = list(self.args(sizes))
        if dropout is not None:  # every module built with a dropout takes it fourth
            args[3] = dropout
        return sub.build(self.name, *args, seed=sizes.seed)

    def book_module(self, sub):
        """The student's module as the book builds it for its printed output."""
        heads = {} if self.book.num_heads is None else {"num_heads": self.book.num_heads}
        return sub.build(self.name, *self.book.args, seed=self.book.seed, **heads)

    @property
    def book_input(self) -> torch.Tensor:
        return book.BATCH if self.batched else book.INPUTS

    def input(self, sizes: Sizes) -> torch.Tensor:
        return tensor(self.out_shape(sizes)[:-1] + (sizes.d_in,), sizes.seed + 1)

    def out_shape(self, sizes: Sizes) -> tuple:
        return (sizes.batch, sizes.tokens, sizes.d_out) if self.batched else (sizes.tokens, sizes.d_out)

    def expected(self, state: dict, x: torch.Tensor, sizes: Sizes) -> torch.Tensor:
        """The reference output on ``state``; a contract weight missing from it is a structure mistake (:func:`named_weights`)."""
        with named_weights(self, state):
            return self.reference(state, x, sizes, None)


@contextmanager
def named_weights(spec: ModuleSpec, present=()):
    """A weight the reference reads by its contract name and the student's module lacks: a structure mistake."""
    try:
        yield
    except KeyError as missing:
        name = str(missing.args[0])
        hint = spec.structure_hint
        raise CheckFailure(f"{spec.name} has no weight named {name!r}",
                           hint(name, set(present)) if callable(hint) else hint) from None


def load_weights(spec: ModuleSpec, module, tensors: dict) -> None:
    """Load ``tensors`` by name into the student's module, saying which contract name is missing."""
    present = set(module.info["params"]) | set(module.info["buffers"])
    with named_weights(spec, present):
        for name in tensors:
            if name not in present:
                raise KeyError(name)
    module.load(tensors)


# -- the grader's weights ----------------------------------------------------------------------

WEIGHTS_IGNORED_HINT = ("forward must compute with the module's own weights (self.W_query, self.W_key, "
                        "self.W_value, ...): no fixed or looked-up outputs, no weights replaced inside forward")


# the contract's layers: a parameter of another name (a mask held as a Parameter) keeps its values
WEIGHT_NAMES = {"W_query", "W_key", "W_value", "out_proj", "qkv", "proj"}


def grader_weights(module, seed: int) -> dict[str, torch.Tensor]:
    """Weights drawn from ``seed`` for the contract's parameters (all where none is named so: the reference
    then names the missing one), uniform in +-1/sqrt(fan_in) as nn.Linear's: weights the module did not choose."""
    params = module.info["params"]
    drawn = {}
    for name in sorted(n for n in params if WEIGHT_NAMES & set(n.split("."))) or sorted(params):
        shape = params[name]
        fan_in = shape[-1] if name.endswith(".weight") else shape[0]
        bound = 1.0 / math.sqrt(max(1, fan_in))
        drawn[name] = tensor(shape, seed * 7919 + zlib.crc32(name.encode()) % 100_003, -bound, bound)
    return drawn


def load_grader_weights(module, seed: int) -> dict[str, torch.Tensor]:
    """Load :func:`grader_weights` into the student's module; returns them (the reference's state)."""
    drawn = grader_weights(module, seed)
    if drawn:
        module.load(drawn)
    return drawn


def expect_weights_matter(module, x: torch.Tensor, out: torch.Tensor, state: dict, seed: int, *,
                          restore: bool = True) -> None:
    """The output must change when other weights are loaded: zeros, constants and looked-up
    outputs earn no points. ``restore``: load ``state`` back afterwards (9 MB at GPT-2's size)."""
    other = grader_weights(module, seed + 104_729)
    if not other:
        raise CheckFailure(f"{module.what} has no registered parameters, so its output cannot depend on them",
                           Hint("layers kept in a plain Python list or dict, or created inside forward, are not "
                                "registered: assign them to self, or hold them in nn.ModuleList", rank=NAMED,
                                mistake='layers_not_registered'))
    module.load(other)
    changed = module(x)
    if restore:
        module.load(state)
    if close(out, changed, EXACT):
        raise CheckFailure(f"{module.what}(x) gave the same output with other weights loaded into it: the output "
                           "does not depend on the module's weights",
                           Hint(WEIGHTS_IGNORED_HINT, rank=NAMED, mistake="weights_ignored"))


def broken(spec: ModuleSpec, sub, sizes: Sizes) -> str:
    """How the student's ``spec`` class fails at ``sizes`` (a few words), or "": whether a later stage can build on it."""
    if spec.name in sub.timed_out:  # calling it would only wait for this stage's time limit too
        return f"yours ran past the time limit in stage {sub.timed_out[spec.name]}"
    # then a shorter input to the same module: a size or tensor kept from the first call breaks it
    runs = [s for s in (sizes, replace(sizes, tokens=sizes.tokens - 1)) if s.tokens]
    try:
        module = spec.build(sub, sizes)
        state = load_grader_weights(module, sizes.seed)
        outs = [(s, spec.input(s), module(spec.input(s))) for s in runs]
    except StudentCodeError as error:
        return f"yours raises {error.exc_type or 'an error'}"
    except NotImplementedYet:
        return "yours is not written yet"
    except CheckFailure:
        return "yours cannot be built"
    for s, x, out in outs:
        expected = spec.expected(state, x, s)
        if not isinstance(out, torch.Tensor) or out.shape != expected.shape or not close(out, expected, FLOAT32):
            return "yours gives other outputs than the book's"
    return ""


def perturbed(x: torch.Tensor, seed: int) -> torch.Tensor:
    """The book's input moved by up to +-0.5 per entry: no lookup of the printed values recognises it."""
    return x + tensor(x.shape, 31 * seed + 17, -0.5, 0.5)
