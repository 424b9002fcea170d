"""The stages of the assignment: one id per stage, used everywhere (notebook heading,
nbgrader grade_id, check module, hint, report row)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    number: int
    id: str
    title: str
    points: int
    names: tuple[str, ...]
    bonus: bool = False

    @property
    def label(self) -> str:
        return f"Stage {self.number} ({self.id})"

    @property
    def grade_id(self) -> str:
        """The nbgrader grade_id of the stage's test cell."""
        return f"test_stage{self.number}_{self.id}"


STAGES: tuple[Stage, ...] = (
    Stage(1, "softmax", "Naive softmax", 10, ("softmax_naive",)),
    Stage(2, "scores", "Attention scores, weights and context vectors", 15,
          ("compute_attn_scores", "compute_attn_weights", "compute_context_vecs")),
    Stage(3, "self_attention", "Self-attention with trainable weights", 15,
          ("SelfAttention_v1", "SelfAttention_v2")),
    Stage(4, "causal", "Causal attention with dropout", 20, ("CausalAttention",)),
    Stage(5, "wrapper", "Multi-head attention wrapper", 10, ("MultiHeadAttentionWrapper",)),
    Stage(6, "mha", "Multi-head attention with weight splits", 20, ("MultiHeadAttention",)),
    Stage(7, "gpt2", "A GPT-2-size attention module", 10, ("build_gpt2_small_mha",)),
    # A bonus: its points are shown beside the grade out of 100, never in it (engine.GradeReport).
    Stage(8, "efficiency", "Efficiency lab", 10,
          ("softmax_stable", "FusedQKVAttention", "attn_weights_bytes", "SDPAMultiHeadAttention"), bonus=True),
)

MAX_SCORE = sum(s.points for s in STAGES if not s.bonus)
assert MAX_SCORE == 100, MAX_SCORE

BY_NUMBER = {s.number: s for s in STAGES}
BY_ID = {s.id: s for s in STAGES}


def stage(key: int | str) -> Stage:
    """Look a stage up by number (4, "4") or id ("causal")."""
    if isinstance(key, str) and key.isdigit():
        key = int(key)
    found = BY_NUMBER.get(key) if isinstance(key, int) else BY_ID.get(key)
    if found is None:
        valid = ", ".join(f"{s.number}/{s.id}" for s in STAGES)
        raise KeyError(f"no stage {key!r}; stages are {valid}")
    return found
