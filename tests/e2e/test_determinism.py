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


def test_a_stage_graded_after_others_gets_the_grade_it_gets_alone(tmp_path):
    """Each stage runs in a fresh copy of the loaded worker, reseeded for it: stage 7 graded after
    stages 3 and 4 has the same results as graded alone, down to its messages and hints."""
    from autograder.chapters import load
    from autograder.core.engine import grade_notebook_file

    chapter = load("ch03_attention")
    submission = tmp_path / "mixed.py"
    submission.write_text((CATALOG / "correct" / "book_style.py").read_text() + NOISY
                          + (CATALOG / "mistakes" / "s4_mask_plain_attribute.py").read_text()
                          + (CATALOG / "mistakes" / "s7_eight_heads.py").read_text())

    def graded(stages) -> list[tuple]:
        report = grade_notebook_file(str(submission), chapter, stages, "cpu")
        assert [s.stage.number for s in report.stages] == stages
        return [(c.check.id, c.status, c.message, str(c.hint)) for c in report.checks]

    after_others, alone = graded([3, 4, 7]), graded([7])
    assert [c for c in after_others if c[0].startswith("7.")] == alone
    lost = {check_id.split(".")[0] for check_id, status, *_ in after_others if status.value != "passed"}
    assert lost == {"3", "4", "7"}, after_others
