"""The chapter's computations step by step (each stage's :class:`Program`): an output equal to a
one-operation variant of one step names that step and the change, in the words of :data:`STEPS`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from autograder.core.mutation import GENERIC, StepVariant, Vocabulary, step_variants


@dataclass(frozen=True)
class Program:
    """``steps`` (float64 in and out), other ways to write one of its steps, and two consecutive steps
    that may come in the other order: the variants of each are tried."""

    steps: Callable
    alternatives: tuple[str, ...] = ()
    swapped: tuple[str, str] | None = None

    def __call__(self, *args):
        return self.steps(*args)

    def variants(self) -> list[StepVariant]:
        return [*step_variants(self.steps, self.alternatives, VOCABULARY),
                *(step_variants(self.steps, (), VOCABULARY, self.swapped) if self.swapped else ())]


# other ways to write the causal mask: tril compared with 0, a large finite number instead of -inf
TRIL_MASK = ("masked = scores.masked_fill(torch.tril(torch.ones(context_length, context_length))"
             "[:num_tokens, :num_tokens] == 0, float('-inf'))")
FINITE_MASK = ("masked = scores.masked_fill(torch.tril(torch.ones(context_length, context_length))"
               "[:num_tokens, :num_tokens] == 0, -1e9)")
ADDITIVE_MASK = ("masked = scores + (1.0 - torch.tril(torch.ones(context_length, context_length))"
                 "[:num_tokens, :num_tokens]) * -1e9")
MASKS = (TRIL_MASK, FINITE_MASK, ADDITIVE_MASK)

# what the changes vary besides core's generic calls: attention's calls, the biases, the mask's triangle, -inf and
# which projection a step uses (copy-pasted W_key for W_value)
VOCABULARY = Vocabulary(
    droppable=GENERIC.droppable | {"softmax", "dropout", "masked_fill", "masked_fill_", "triu", "tril", "out_proj", "proj"},
    keywords=(*GENERIC.keywords, "bias", "qkv_bias"), attributes=(("triu", "tril"),),
    strings=(("-inf", "inf"), ("W_query", "W_key", "W_value")))

# steps of one kind, named together when an error cannot tell them apart
GROUPS: dict[str, tuple[str, str]] = {step: (group, words) for group, words, steps in (
    ("projections", "the projections of the input, x @ W_query, x @ W_key, x @ W_value",
     ("query_projection", "key_projection", "value_projection")),
    ("split_heads", "the split of the queries, keys or values into heads, (b, num_heads, num_tokens, head_dim)",
     ("split_queries", "split_keys", "split_values"))) for step in steps}

# step -> (its id in a mistake's id, the step in the chapter's words: what a hint says was changed)
STEPS: dict[str, tuple[str, str]] = {
    "exp_x": ("exp", "the exponentials of the input"),
    "sums": ("sum", "the sums of the exponentials (one per row, along the last dimension, kept for broadcasting)"),
    "normalised": ("divide_by_sum", "the division of the exponentials by their sums"),
    "queries": ("query_projection", "the queries (the input times W_query)"),
    "keys": ("key_projection", "the keys (the input times W_key)"),
    "values": ("value_projection", "the values (the input times W_value)"),
    "scores": ("scores", "the attention scores, queries @ keys transposed (every query with every key)"),
    "masked": ("mask", "the causal mask: the scores above the diagonal (the future) filled with -inf"),
    "scaled": ("scale", "the scaling of the scores by 1/sqrt(d_k)"),
    "weights": ("softmax", "the softmax over the keys (the last axis), which makes each query's weights sum to 1"),
    "context": ("context", "the context vectors, the weights times the values"),
    "d_out": ("split_sizes", "d_out, the width of the queries"),
    "head_dim": ("split_sizes", "head_dim, the width of one head (d_out split evenly over num_heads, a whole number)"),
    "q_heads": ("split_queries", "the split of the queries into heads, (b, num_heads, num_tokens, head_dim)"),
    "k_heads": ("split_keys", "the split of the keys into heads, (b, num_heads, num_tokens, head_dim)"),
    "v_heads": ("split_values", "the split of the values into heads, (b, num_heads, num_tokens, head_dim)"),
    "merged": ("merge_heads", "the merge of the heads back into (b, num_tokens, d_out)"),
    "projected": ("out_proj", "the output projection, out_proj"),
    "return": ("output", "what the function returns"),
}


def as_written(code: str) -> str:
    """A step's code as the chapter's classes write it: ``self.W_query(x)``, ``self.W_query``."""
    code = re.sub(r"linear\(state, '(\w+)', (\w+)\)", r"self.\1(\2)", code)
    return re.sub(r"state\['(\w+)'\]", r"self.\1", code)
