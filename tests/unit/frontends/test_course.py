"""make release's course step: the points table follows the source notebook's test cells."""

from __future__ import annotations

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.course import Course, StagePoints
from autograder.frontends.course import points_table

TABLE = """intro

| stage | id | you write | points |
|---|---|---|---|
| 1 | `softmax` | `softmax_naive(x)` | 10 |
| 7 | `gpt2` | `build_gpt2_small_mha()` | 10 |
| 8 | `efficiency` | `softmax_stable` | 10 bonus |

after"""


def test_points_change_drop_and_add_rows_keeping_the_rest_of_the_text():
    course = Course({1: StagePoints(5.0, False), 2: StagePoints(15.0, False), 7: StagePoints(12.5, False)}, "s")
    lines = points_table(TABLE, CHAPTER, course).split("\n")
    assert "| 1 | `softmax` | `softmax_naive(x)` | 5 |" in lines
    assert "| 7 | `gpt2` | `build_gpt2_small_mha()` | 12.5 |" in lines
    assert not any(line.startswith("| 8 ") for line in lines)  # the bonus dropped
    added = next(line for line in lines if line.startswith("| 2 "))  # a stage the table lacked
    assert added.endswith("| 15 |") and "`compute_attn_scores`" in added
    assert lines[0] == "intro" and lines[-1] == "after"


def test_a_text_without_a_table_of_stages_is_left_alone():
    assert points_table("no table here\n| a | b |", CHAPTER, CHAPTER.course) == "no table here\n| a | b |"
