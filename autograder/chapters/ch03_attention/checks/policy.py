"""The call policy the module stages share: a stage that teaches attention refuses PyTorch's, and
charges only its own code (the wrapper not its heads', the GPT-2 builder not its MultiHeadAttention's)."""

from __future__ import annotations

from autograder.core.failures import POLICY, CheckFailure, Hint, StudentCodeError
from autograder.core.strategies import tensor

ATTENTION = {"scaled_dot_product_attention", "multi_head_attention_forward", "_native_multi_head_attention",
             "flex_attention"}
LESSON = ("stages 3-7 ask you to write the attention yourself: scores, scale, mask, softmax, weights @ values "
          "(PyTorch's fused attention is the lesson of the bonus stage 8)")


class Refused(CheckFailure):
    """The stage's code calls what the stage teaches: the stage earns no points."""

    def __init__(self, what: str, found: list[str], lesson: str):
        super().__init__(f"{what} calls {found[0]}, which does the work this stage teaches, so the stage "
                         "earns no points", Hint(lesson, rank=POLICY))


def library_calls(calls: list[str], names: set[str]) -> list[str]:
    return sorted(c for c in calls if c.rsplit(".", 1)[-1] in names)


def only_refusals(policy):
    """``policy`` raising only its refusal: any other problem (a name not defined yet, an error)
    is left to the stage's checks."""
    def call_policy(sub) -> None:
        try:
            policy(sub)
        except Refused:
            raise
        except CheckFailure:
            return
    return call_policy


def _attention_calls(sub, build, x) -> tuple[str, list[str]]:
    """(what, the library attention one eval-mode forward pass calls)."""
    module = build()
    try:
        calls = module.calls(x)
    except StudentCodeError as error:
        # flex attention cannot run under PyTorch's function recording: its error names it
        calls = ["flex_attention"] if "flex" in error.message.lower() or "score_mod" in error.message else []
    found = library_calls(calls, ATTENTION)
    if "MultiheadAttention" in {entry["class"] for entry in module.info["modules"].values()}:
        found.append("torch.nn.MultiheadAttention")
    return module.what, found


def no_library_attention(*modules, parts=None):
    """None of ``modules`` ((builder, input shape) each) calls library attention; ``parts``: the module
    the stage's own are built from, whose calls are not charged here."""
    def policy(sub) -> None:
        for build, shape in modules:
            what, found = _attention_calls(sub, lambda build=build: build(sub), tensor(shape, 1))
            if found and parts is not None:
                _, in_parts = _attention_calls(sub, lambda: parts[0](sub), tensor(parts[1], 1))
                found = [f for f in found if f not in in_parts]
            if found:
                raise Refused(f"{what}'s forward", found, LESSON)
    return only_refusals(policy)
