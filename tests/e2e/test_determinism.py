"""Deterministic grades: the same submission graded twice gives the same results, down to the
failing example shown and its hint (how a property failure shows that example plainly:
tests/unit/core/test_strategies.py)."""

from __future__ import annotations

from support import TESTS, run_grader

CATALOG = TESTS / "catalog"

# Wrong in ways that exercise shrinking and randomness: hand-made dropout (random masks in
# training mode), random noise in eval mode (another result on every call), and a softmax that
# fails only on some drawn inputs.
NOISY = '''

class SelfAttention_v2(SelfAttention_v2):
    def forward(self, x):
        return super().forward(x) + 1e-3 * torch.randn(x.shape[0], self.W_value.out_features)


def compute_attn_weights(attn_scores):
    return attn_scores / attn_scores.sum(dim=-1, keepdim=True)
'''


def test_the_same_submission_gets_the_same_results_twice(tmp_path):
    source = (CATALOG / "correct" / "book_style.py").read_text() + NOISY + \
        (CATALOG / "mistakes" / "s4_dropout_without_rescaling.py").read_text()
    submission = tmp_path / "noisy.py"
    submission.write_text(source)
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = run_grader(submission, tmp_path / "first", "--stage", "2", "3", "4", "--device", "cpu")
    second = run_grader(submission, tmp_path / "second", "--stage", "2", "3", "4", "--device", "cpu")
    assert first.results is not None and second.results is not None, first.stdout + first.stderr
    assert first.results == second.results
    lost = {t["number"].split(".")[0] for t in first.results["tests"] if t["score"] < t["max_score"]}
    assert lost == {"2", "3", "4"}, first.results  # every planted mistake counted, in its own stage
    assert "Traceback" not in first.stdout + first.stderr


def test_the_order_stages_are_graded_in_changes_no_grade(tmp_path):
    """The chapter grades stage 7 first (``run_first``, for speed); graded in the chapter's
    order instead, every check has the same result, down to its message and hint, and the
    report lists the stages in the chapter's order either way."""
    import dataclasses

    from autograder.chapters import load
    from autograder.core.engine import grade_notebook_file

    chapter = load("ch03_attention")
    assert chapter.run_first == ("gpt2",)
    submission = tmp_path / "mixed.py"
    submission.write_text((CATALOG / "correct" / "book_style.py").read_text() + NOISY
                          + (CATALOG / "mistakes" / "s4_mask_plain_attribute.py").read_text()
                          + (CATALOG / "mistakes" / "s7_eight_heads.py").read_text())
    stages = [3, 4, 7]

    def graded(in_order) -> list[tuple]:
        report = grade_notebook_file(str(submission), in_order, stages, "cpu")
        assert [s.stage.number for s in report.stages] == stages
        return [(c.check.id, c.status, c.message, str(c.hint)) for c in report.checks]

    as_declared = graded(chapter)
    plain = graded(dataclasses.replace(chapter, run_first=()))
    assert as_declared == plain
    lost = {check_id.split(".")[0] for check_id, status, *_ in as_declared if status.value != "passed"}
    assert lost == {"3", "4", "7"}, as_declared


# Stage 5's copy ends itself halfway through its checks: a stop on the side lane
EXITS_IN_STAGE_5 = '''

import os as _os


class MultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        if x.shape[0] > 1:
            _os._exit(7)
        return super().forward(x)
'''


def test_grading_two_stages_at_once_changes_no_grade(tmp_path):
    """Where the grader has two cores, a second copy of the loaded worker grades the chapter's
    ``run_beside`` stages while the loaded worker grades the others (sandbox.worker.Lane).
    Graded so, and graded one stage at a time, every check has the same result, down to its
    message and hint: with mistakes on both lanes and a stage that ends its own copy."""
    from autograder.chapters import load
    from autograder.core.engine import grade_notebook_file
    from autograder.sandbox.limits import Limits
    from autograder.sandbox.loader import read_cells
    from autograder.sandbox.settings import Settings
    from autograder.sandbox.worker import Worker

    chapter = load("ch03_attention")
    assert set(chapter.run_beside) == {"causal", "wrapper", "mha"}
    submission = tmp_path / "mixed.py"
    submission.write_text((CATALOG / "correct" / "book_style.py").read_text() + EXITS_IN_STAGE_5
                          + (CATALOG / "mistakes" / "s4_mask_plain_attribute.py").read_text()
                          + (CATALOG / "mistakes" / "s6_view_without_contiguous.py").read_text()
                          + (CATALOG / "mistakes" / "s7_eight_heads.py").read_text())
    stages = [4, 5, 6, 7]  # 7 on the main lane, the others beside it

    def graded(lanes: int) -> tuple[list[tuple], bool]:
        settings = Settings(limits=Limits(lanes=lanes))
        worker = Worker(read_cells(str(submission)), "cpu", settings)
        try:
            report = grade_notebook_file(str(submission), chapter, stages, "cpu", settings, worker=worker, close=False)
            beside = worker.side_lane is not None
        finally:
            worker.close()
        assert [s.stage.number for s in report.stages] == stages
        return [(c.check.id, c.status, c.message, str(c.hint)) for c in report.checks], beside

    (two, used), (one, unused) = graded(2), graded(1)
    assert used and not unused
    assert two == one
    lost = {check_id.split(".")[0] for check_id, status, *_ in two if status.value != "passed"}
    assert lost == {"4", "5", "6", "7"}, two
    assert any(status.value == "stopped" for check_id, status, *_ in two if check_id.startswith("5.")), two
