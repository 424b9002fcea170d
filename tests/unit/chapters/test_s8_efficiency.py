"""ch03's stage 8 (the efficiency lab) as data: a bonus outside the 100 points, and a fixed input
that breaks the naive formula (grading it is tests/e2e/test_efficiency.py)."""

from __future__ import annotations

import torch

from autograder.chapters.ch03_attention import CHAPTER

BONUS = CHAPTER.stage(8)


def test_stage8_is_a_bonus_outside_the_grades_maximum():
    assert BONUS.bonus and BONUS.id == "efficiency"
    assert CHAPTER.max_score == sum(CHAPTER.points(s) for s in CHAPTER.stages if s is not BONUS)


def test_large_example_overflows_the_naive_formula():
    """8.2's fixed input is one where the naive formula really breaks in float32."""
    from autograder.chapters.ch03_attention.checks.s8_efficiency import LARGE_EXAMPLE

    naive = torch.exp(LARGE_EXAMPLE) / torch.exp(LARGE_EXAMPLE).sum(dim=-1, keepdim=True)
    # NaN in the three far-off rows, not in the moderate one: a pattern that names the mistake
    assert torch.isnan(naive).all(dim=-1).tolist() == [True, True, True, False]
    assert torch.isfinite(torch.softmax(LARGE_EXAMPLE, dim=-1)).all()
