"""Every named mistake of ch03's reference.py changes the output.

A mistake whose output equals the correct one on every example could never be told apart from a
right answer, so its hint would be shown to a student who did nothing wrong (or never). Each
mistake is parametrized by name from the reference's own tables, so a new one is covered here
without an edit; a new *table* fails ``test_every_mistake_table_is_covered`` until it is added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch

from autograder.chapters.ch03_attention import reference as R
from autograder.core.compare import FLOAT32, close


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny tensors: one thread, as the grader computes (submission.torch_threads). A second OpenMP
    thread spinning after every operation makes each one ten times slower on two busy cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def random(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


# -- stages 1 and 2: functions ------------------------------------------------------------------

@dataclass(frozen=True)
class FunctionFamily:
    mistakes: object  # (*args) -> FunctionMistakes
    correct: object  # (*args) -> the right output, float64
    examples: tuple  # argument tuples


def _weights(n: int, seed: int) -> torch.Tensor:
    return torch.softmax(random(n, n, seed=seed), -1)


FUNCTION_FAMILIES = {
    "softmax": FunctionFamily(
        lambda x: R.softmax_mistakes(x), lambda x: torch.softmax(x, -1),
        ((random(6, seed=1),), (random(3, 3, seed=2),), (random(2, 3, 4, seed=3),))),
    "scores": FunctionFamily(
        lambda x: R.scores_mistakes(x), lambda x: x @ x.T,
        ((random(4, 3, seed=4),), (random(3, 3, seed=5),))),
    "weights": FunctionFamily(
        lambda s: R.WEIGHTS_MISTAKES, lambda s: torch.softmax(s, -1),
        ((random(4, 4, seed=6),),)),
    "context": FunctionFamily(
        lambda w, x: R.CONTEXT_MISTAKES, lambda w, x: w @ x,
        ((_weights(4, 7), random(4, 3, seed=8)),)),
}

FUNCTION_MISTAKES = sorted({(family, name) for family, spec in FUNCTION_FAMILIES.items()
                            for args in spec.examples for name in spec.mistakes(*args)})


@pytest.mark.parametrize("family, name", FUNCTION_MISTAKES, ids=[f"{f}:{n}" for f, n in FUNCTION_MISTAKES])
def test_function_mistake_changes_the_output(family, name):
    spec = FUNCTION_FAMILIES[family]
    ran = differed = 0
    for args in spec.examples:
        mistakes = spec.mistakes(*args)
        if name not in mistakes:
            continue
        outputs, hints = R.function_variants({name: mistakes[name]}, *args)
        if name not in outputs:
            continue  # the mistake fails at these shapes
        ran += 1
        assert hints[name], f"{family} mistake {name} has no hint"
        correct = spec.correct(*(R.d(a) for a in args))
        differed += not close(outputs[name], correct, FLOAT32)
    assert ran, f"{family} mistake {name} never ran on the examples"
    assert differed, f"{family} mistake {name} equals the correct output on every example"


# -- stages 3 to 6: modules ---------------------------------------------------------------------

@dataclass(frozen=True)
class Example:
    batch: int
    tokens: int
    d_in: int
    num_heads: int
    head_dim: int
    seed: int

    @property
    def d_out(self) -> int:
        return self.num_heads * self.head_dim


# Sizes all different (so an axis mix-up shows), and one example with num_tokens == num_heads,
# the only shape at which some split mistakes run at all.
EXAMPLES = (Example(batch=2, tokens=5, d_in=7, num_heads=2, head_dim=3, seed=10),
            Example(batch=3, tokens=2, d_in=5, num_heads=2, head_dim=4, seed=11))


def linear_state(prefix: str, d_in: int, d_out: int, seed: int, bias: bool = False) -> dict:
    state = {f"{prefix}.weight": random(d_out, d_in, seed=seed)}
    if bias:
        state[f"{prefix}.bias"] = random(d_out, seed=seed + 1)
    return state


def qkv_state(d_in: int, d_out: int, seed: int, prefix: str = "") -> dict:
    return {k: v for i, n in enumerate(("W_query", "W_key", "W_value"))
            for k, v in linear_state(prefix + n, d_in, d_out, seed + 10 * i).items()}


def v1(ex: Example, mistake):
    state = {n: random(ex.d_in, ex.head_dim, seed=ex.seed + i) for i, n in enumerate(("W_query", "W_key", "W_value"))}
    return R.attention(state, random(ex.tokens, ex.d_in, seed=ex.seed), mistake, causal=False, v1=True)


def v2(ex: Example, mistake):
    return R.attention(qkv_state(ex.d_in, ex.head_dim, ex.seed), random(ex.tokens, ex.d_in, seed=ex.seed), mistake,
                       causal=False)


def causal(ex: Example, mistake):
    return R.attention(qkv_state(ex.d_in, ex.head_dim, ex.seed),
                       random(ex.batch, ex.tokens, ex.d_in, seed=ex.seed), mistake)


def wrapper(ex: Example, mistake):
    state = {k: v for h in range(ex.num_heads) for k, v in
             qkv_state(ex.d_in, ex.head_dim, ex.seed + 100 * h, prefix=f"heads.{h}.").items()}
    return R.wrapper(state, random(ex.batch, ex.tokens, ex.d_in, seed=ex.seed), ex.num_heads, mistake)


def multi_head(ex: Example, mistake):
    state = {**qkv_state(ex.d_in, ex.d_out, ex.seed), **linear_state("out_proj", ex.d_out, ex.d_out, ex.seed + 50, True)}
    return R.multi_head(state, random(ex.batch, ex.tokens, ex.d_in, seed=ex.seed), ex.num_heads, mistake)


# Which reference computes each table's mistakes (the stages that use them).
MODULE_REFERENCES = {
    "attention": (v1, v2, causal, wrapper, multi_head),
    "wrapper": (wrapper,),
    "mha": (multi_head,),
    "sdpa": (causal, multi_head),
}
MODULE_TABLES = {"attention": R.ATTENTION_MISTAKES, "wrapper": R.WRAPPER_MISTAKES, "mha": R.MHA_MISTAKES,
                 "sdpa": R.SDPA_MASK_MISTAKES}
MODULE_MISTAKES = [(table, name) for table, mistakes in MODULE_TABLES.items() for name in mistakes]


@pytest.mark.parametrize("table, name", MODULE_MISTAKES, ids=[f"{t}:{n}" for t, n in MODULE_MISTAKES])
def test_module_mistake_changes_the_output(table, name):
    assert MODULE_TABLES[table][name], f"mistake {name} has no hint"
    ran, differed = [], []
    for reference in MODULE_REFERENCES[table]:
        for ex in EXAMPLES:
            correct = reference(ex, None)
            assert torch.isfinite(correct).all(), f"the correct {reference.__name__} output is not finite"
            try:
                wrong = reference(ex, name)
            except RuntimeError:
                continue  # the mistake fails at these sizes (as it would in the student's code)
            ran.append(reference.__name__)
            if not close(wrong, correct, FLOAT32):
                differed.append(reference.__name__)
    assert ran, f"{table} mistake {name} never ran"
    assert differed, f"{table} mistake {name} equals the correct output wherever it ran ({', '.join(ran)})"


def test_the_correct_references_agree_with_each_other():
    """The baseline the mistakes are compared with: one head of the wrapper is causal attention,
    and a one-head multi-head module without the output projection is causal attention too."""
    ex = EXAMPLES[0]
    x = random(ex.batch, ex.tokens, ex.d_in, seed=ex.seed)
    heads = qkv_state(ex.d_in, ex.head_dim, ex.seed, prefix="heads.0.")
    plain = {k.removeprefix("heads.0."): v for k, v in heads.items()}
    assert close(R.wrapper(heads, x, 1), R.attention(plain, x), FLOAT32)
    identity = {"out_proj.weight": torch.eye(ex.head_dim), "out_proj.bias": torch.zeros(ex.head_dim)}
    assert close(R.multi_head({**plain, **identity}, x, 1), R.attention(plain, x), FLOAT32)
    q = x.double() @ plain["W_query.weight"].double().T
    k = x.double() @ plain["W_key.weight"].double().T
    v = x.double() @ plain["W_value.weight"].double().T
    scores = (q @ k.transpose(1, 2)).masked_fill(torch.ones(ex.tokens, ex.tokens, dtype=torch.bool).triu(1), -math.inf)
    by_hand = torch.softmax(scores / math.sqrt(ex.head_dim), -1) @ v
    assert close(R.attention(plain, x), by_hand, FLOAT32)


def test_every_mistake_table_is_covered():
    tables = {name for name, value in vars(R).items() if name.endswith("_MISTAKES") and isinstance(value, dict)}
    makers = {name for name, value in vars(R).items() if name.endswith("_mistakes") and callable(value)}
    covered_tables = {"SOFTMAX_MISTAKES", "SCORES_MISTAKES", "WEIGHTS_MISTAKES", "CONTEXT_MISTAKES",
                      "ATTENTION_MISTAKES", "WRAPPER_MISTAKES", "MHA_MISTAKES", "SDPA_MASK_MISTAKES"}
    assert tables == covered_tables, "add the new table to FUNCTION_FAMILIES or MODULE_TABLES"
    assert makers == {"softmax_mistakes", "scores_mistakes"}, "add the new function to FUNCTION_FAMILIES"
    # mistakes_for picks from ATTENTION_MISTAKES only
    assert set(R.mistakes_for(causal=True)) <= set(R.ATTENTION_MISTAKES)
