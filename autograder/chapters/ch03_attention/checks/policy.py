"""The call policy: the exercise is to write attention, so by default a stage does not accept a
call of what it teaches. ``softmax_naive`` may not call a library softmax; stages 3-7 may not
call ``scaled_dot_product_attention`` (stage 8's lesson), ``nn.MultiheadAttention`` or flex
attention. Each stage module declares its policy (:func:`no_library_softmax`,
:func:`no_library_attention`) in its ``STAGE``; the engine runs it before the stage's checks; an
instructor relaxes it with the environment variable named in
:data:`autograder.core.engine.ALLOW_LIBRARY_ATTENTION`.

A stage is only charged for its own code: the wrapper (stage 5) for calls its heads do not
make, the GPT-2 builder (stage 7) for calls the student's own MultiHeadAttention does not make.
"""

from __future__ import annotations

from autograder.core.failures import CheckFailure, Diagnosis, StudentCodeError
from autograder.core.strategies import tensor

SOFTMAXES = {"softmax", "_softmax", "log_softmax", "softmin"}
ATTENTION = {"scaled_dot_product_attention", "multi_head_attention_forward", "_native_multi_head_attention",
             "flex_attention"}
LESSON = ("stages 3-7 ask you to write the attention yourself: scores, scale, mask, softmax, weights @ values "
          "(PyTorch's fused attention is the lesson of the bonus stage 8)")


def _library(calls: list[str], names: set[str]) -> list[str]:
    return sorted(c for c in calls if c.rsplit(".", 1)[-1] in names)


def _module_calls(sub, build, x) -> tuple[str, list[str], set[str]]:
    """(what, the calls of one eval-mode forward pass, the classes of its submodules)."""
    module = build()
    classes = {entry["class"] for entry in module.info["modules"].values()}
    try:
        calls = module.calls(x)
    except StudentCodeError as error:
        # flex attention cannot run under PyTorch's function recording: its error names it
        calls = ["flex_attention"] if "flex" in error.message.lower() or "score_mod" in error.message else []
    return module.what, calls, classes


def _attention_calls(sub, build, x) -> tuple[str, list[str]]:
    what, calls, classes = _module_calls(sub, build, x)
    found = _library(calls, ATTENTION)
    if "MultiheadAttention" in classes:
        found.append("torch.nn.MultiheadAttention")
    return what, found


def _refuse(what: str, found: list[str], lesson: str) -> None:
    raise CheckFailure(f"{what} calls {found[0]}, which does the work this stage teaches, so the stage "
                       "earns no points", Diagnosis(lesson, Diagnosis.POLICY))


def _charged_only_for_failures(policy):
    """``policy`` raising only its refusal: any other problem (a name not defined yet, an error)
    is left to the stage's checks."""
    def call_policy(sub) -> None:
        try:
            policy(sub)
        except CheckFailure as failure:
            if isinstance(failure, StudentCodeError) or not isinstance(failure.hint, Diagnosis):
                return
            raise
    return call_policy


def no_library_softmax(name: str):
    """The stage's policy: the function ``name`` is the softmax itself, and calls none."""
    def policy(sub) -> None:
        if sub.kind(name) == "missing":
            return
        found = _library(sub.function(name).calls(tensor((2, 5), 1)), SOFTMAXES)
        if found:
            _refuse(f"{name}(x)", found, f"{name} is the softmax itself: compute exp(x) and divide by "
                    "its sum along the last dimension (no torch.softmax or F.softmax)")
    return _charged_only_for_failures(policy)


def no_library_attention(*modules, parts=None):
    """The stage's policy: none of ``modules`` ((builder of sub, input shape) each) calls library
    attention in its forward. ``parts``: (builder, input shape) of the module the stage's own
    modules are built from, whose calls are its own stage's, not charged here."""
    if not modules:
        raise ValueError("no_library_attention: name the modules whose forward the policy reads")

    def policy(sub) -> None:
        for build, shape in modules:
            what, found = _attention_calls(sub, lambda build=build: build(sub), tensor(shape, 1))
            if found and parts is not None:
                _, in_parts = _attention_calls(sub, lambda: parts[0](sub), tensor(parts[1], 1))
                found = [f for f in found if f not in in_parts]
            if found:
                _refuse(f"{what}'s forward", found, LESSON)
    return _charged_only_for_failures(policy)
