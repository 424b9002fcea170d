"""Stage 7's 1,024-token check (7.4): a right output costs one pass at that size, the diagnosis
of a wrong one does only the work it needs, and an output that ignores the weights at that size
alone still fails as such."""

from __future__ import annotations

import contextlib
import io

from support import TESTS, grade_in_process

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.checks import CheckStatus

BUILDER = '''
class Counted(MultiHeadAttention):
    """The book's class, counting its forward passes at 1,024 tokens."""
    long_passes = 0

    def forward(self, x):
        if x.shape[1] == 1024:
            type(self).long_passes += 1
            if ZEROS_AT_1024:
                return torch.zeros_like(x)
        return super().forward(x)


def build_gpt2_small_mha():
    return Counted(768, 768, 1024, 0.0, num_heads=HEADS)
'''


def _graded(heads: int, zeros_at_1024: bool = False):
    namespace = {"__name__": "__main__", "HEADS": heads, "ZEROS_AT_1024": zeros_at_1024}
    with contextlib.redirect_stdout(io.StringIO()):
        exec((TESTS / "catalog" / "correct" / "book_style.py").read_text() + BUILDER, namespace)  # noqa: S102
        result = grade_in_process(CHAPTER, CHAPTER.stage(7), namespace, only=frozenset({"7.3", "7.4"}))
    return {c.check.id: c for c in result.checks}, namespace["Counted"].long_passes


def test_a_right_output_costs_one_pass_at_1024_tokens():
    checks, long_passes = _graded(heads=12)
    assert checks["7.3"].status is CheckStatus.PASSED
    assert checks["7.4"].status is CheckStatus.PASSED
    assert long_passes == 1  # compared with the 12-head twin and the weights' test on the first tokens


def test_a_wrong_head_count_at_1024_tokens_is_named_on_the_first_tokens_without_a_long_pass():
    checks, long_passes = _graded(heads=8)
    assert checks["7.4"].status is CheckStatus.FAILED
    assert checks["7.4"].diagnosis.mistake == "gpt2_num_heads_8"
    assert "on the first 5 tokens matches 8 heads" in checks["7.4"].hint
    assert long_passes == 0  # wrong on its first tokens already: no pass at full size, no 8-head twin there


def test_an_output_that_ignores_the_weights_only_at_1024_tokens_still_fails_as_such():
    checks, long_passes = _graded(heads=12, zeros_at_1024=True)
    assert checks["7.3"].status is CheckStatus.PASSED
    assert checks["7.4"].status is CheckStatus.FAILED
    assert checks["7.4"].diagnosis.mistake == "weights_ignored"
    assert long_passes == 2  # no head count explains zeros: the weights' pass at full size says why
