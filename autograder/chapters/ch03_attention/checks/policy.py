"""The call policy: the exercise is to write attention, so by default a stage does not accept a
call of what it teaches. ``softmax_naive`` may not call a library softmax; stages 3-7 may not
call ``scaled_dot_product_attention`` (stage 8's lesson), ``nn.MultiheadAttention`` or flex
attention. The engine runs :func:`call_policy` before a stage's checks; an instructor relaxes it
with the environment variable named in :data:`autograder.core.engine.ALLOW_LIBRARY_ATTENTION`.

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


def _modules(sub, stage_number: int):
    """(builder, input) of the modules whose forward the stage's policy reads."""
    small = tensor((2, 4, 3), 1)
    if stage_number == 3:
        return [(lambda: sub.build("SelfAttention_v1", 3, 2, seed=0), small[0]),
                (lambda: sub.build("SelfAttention_v2", 3, 2, seed=0), small[0])]
    if stage_number == 4:
        return [(lambda: sub.build("CausalAttention", 3, 2, 6, 0.0, seed=0), small)]
    if stage_number == 5:
        return [(lambda: sub.build("MultiHeadAttentionWrapper", 3, 2, 6, 0.0, num_heads=2, seed=0), small)]
    if stage_number == 6:
        return [(lambda: sub.build("MultiHeadAttention", 3, 4, 6, 0.0, num_heads=2, seed=0), small)]
    if stage_number == 7:
        return [(lambda: sub.call_for_module("build_gpt2_small_mha"), tensor((1, 4, 768), 1))]
    return []


# what a stage's own code is compared with: calls its parts already make are their stage's
_PARTS = {5: (lambda sub: sub.build("CausalAttention", 3, 2, 6, 0.0, seed=0), (2, 4, 3)),
          7: (lambda sub: sub.build("MultiHeadAttention", 768, 768, 1024, 0.0, num_heads=12, seed=0), (1, 4, 768))}


def call_policy(sub, stage) -> None:
    """Raise a CheckFailure when the stage's code calls what the stage teaches; any other
    problem (a name not defined yet, an error) is left to the stage's checks."""
    try:
        _check(sub, stage.number)
    except CheckFailure as failure:
        if isinstance(failure, StudentCodeError) or not isinstance(failure.hint, Diagnosis):
            return
        raise


def _check(sub, number: int) -> None:
    if number == 1:
        if sub.kind("softmax_naive") == "missing":
            return
        found = _library(sub.function("softmax_naive").calls(tensor((2, 5), 1)), SOFTMAXES)
        if found:
            _refuse("softmax_naive(x)", found, "softmax_naive is the softmax itself: compute exp(x) and divide by "
                    "its sum along the last dimension (no torch.softmax or F.softmax)")
        return
    for build, x in _modules(sub, number):
        what, found = _attention_calls(sub, build, x)
        if found and number in _PARTS:
            make_part, shape = _PARTS[number]
            _, in_parts = _attention_calls(sub, lambda make_part=make_part: make_part(sub), tensor(shape, 1))
            found = [f for f in found if f not in in_parts]
        if found:
            _refuse(f"{what}'s forward", found, LESSON)
