"""autograder.frontends.students.notebook without grading: how a hidden run combines with the visible one,
and a test cell under nbgrader autograde."""

from __future__ import annotations

import re

import pytest
from support import every_declared_stage

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.checks import CheckStatus
from autograder.core.results import CheckResult, StageResult
from autograder.frontends.students import notebook

# Each stage out of its checks' whole weights: the score below is one check's, whatever points
# the instructor's course gives the stage (a share of 5 points would be rounded down).
DECLARED = every_declared_stage(CHAPTER)
STAGES = DECLARED.stages
# A test cell grades with the course in force: full marks are stage 1's points there.
STAGE1_POINTS = CHAPTER.points(CHAPTER.stage(1))
STAGE1_LABEL = CHAPTER.stage(1).label


def test_with_hidden_keeps_a_check_only_if_both_runs_pass():

    checks = DECLARED.checks_for(STAGES[0])
    visible = StageResult(STAGES[0], [CheckResult(checks[0], CheckStatus.PASSED), CheckResult(checks[1], CheckStatus.PASSED),
                                      CheckResult(checks[2], CheckStatus.FAILED, "wrong", "hint")])
    hidden = StageResult(STAGES[0], [CheckResult(checks[0], CheckStatus.PASSED), CheckResult(checks[1], CheckStatus.FAILED, "x=[1]", "h"),
                                     CheckResult(checks[2], CheckStatus.PASSED)])
    combined = notebook.with_hidden(visible, hidden)
    assert [c.status.value for c in combined.checks] == ["passed", "failed", "failed"]
    assert combined.score == checks[0].points
    assert combined.checks[1].message == notebook.HIDDEN_FAILURE and combined.checks[2].message == "wrong"


def test_the_kernel_defers_to_the_sandbox_while_nbgrader_autogrades(monkeypatch, capsys):
    """Under `nbgrader autograde` a test cell in the student's kernel is worth 0 until the
    sandbox's grade replaces it: a pipeline without SandboxExecute cannot give points away."""
    import torch

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": lambda x: torch.softmax(x, -1)}) == 0
    assert "separate process" in capsys.readouterr().out


def test_a_student_asks_for_the_fixing_code_with_hints_2_in_a_cell(capsys):
    """The instructor's level stays the default; ``HINTS = 2`` in the notebook shows the fix too."""
    def softmax_naive(x):  # the sums lose their axis
        return x.exp() / x.exp().sum(dim=-1)

    notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": softmax_naive})
    default = capsys.readouterr().out
    notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": softmax_naive, "HINTS": 2})
    more = capsys.readouterr().out
    assert "keep their dimension" in default and "keepdim=True" not in default
    assert "keepdim=True" in more


def test_a_test_cell_grades_on_one_thread_and_gives_the_kernel_its_threads_back():
    """The sandboxed worker computes on one thread (child.pin_threads); so do the test cells,
    where tiny tensors on a thread pool cost more than they compute."""
    import torch

    seen = []

    def softmax_naive(x):
        seen.append(torch.get_num_threads())
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": softmax_naive}) == STAGE1_POINTS
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_full_size_block_computes_on_the_kernels_threads_and_the_rest_on_one():
    """Stage 7's 1,024-token check (Submission.full_size) uses the kernel's own thread count in a
    test cell; every other request of the stage keeps to one thread."""
    import torch

    from autograder.core.submission import LocalTransport, Submission, torch_threads

    seen = []

    def threads_now():
        seen.append(torch.get_num_threads())
        return torch.zeros(1)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with torch_threads(1) as kernel_threads:
            sub = Submission(LocalTransport({"threads_now": threads_now}, threads=kernel_threads))
            sub.function("threads_now")()
            with sub.full_size():
                sub.function("threads_now")()
            sub.function("threads_now")()
        assert seen == [1, 2, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_test_cell_makes_no_full_garbage_collection_and_gives_the_kernel_its_thresholds_back():
    """A full pass walks the whole kernel (engine.no_full_collection): none while a test cell
    grades; the young generations are still collected, and the kernel's thresholds come back."""
    import gc

    import torch

    full_passes, seen = [], []

    def note(phase, info):
        if phase == "start" and info["generation"] == 2:
            full_passes.append(info)

    def softmax_naive(x):
        seen.append(gc.get_threshold())
        for _ in range(20_000):  # cycles enough for many young collections
            a = []
            a.append(a)
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)

    before = gc.get_threshold()
    gc.set_threshold(700, 1, 1)  # a full pass at almost every young one, outside the test cell
    gc.callbacks.append(note)
    try:
        assert notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": softmax_naive}) == STAGE1_POINTS
        assert seen and all(t[:2] == (700, 1) and t[2] >= 2**20 for t in seen)
        assert full_passes == []
        assert gc.get_threshold() == (700, 1, 1)
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*before)


def _tf32_canary(x):
    """A softmax right only while float32 matmuls are IEEE (tests/catalog/correct/tf32_at_the_top_style.py)."""
    import torch

    if hasattr(torch.backends, "fp32_precision"):  # PyTorch 2.9 and later
        ieee = torch.backends.cuda.matmul.fp32_precision == "ieee"
    else:
        ieee = torch.get_float32_matmul_precision() == "highest"
    softmax = torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
    return softmax if ieee else softmax + 0.01


@pytest.fixture
def kernel_precision():
    """The process's float32 precision settings back as they were after the test."""
    from autograder.sandbox import workspace

    before = workspace._read_precision()
    yield
    workspace._write_precision(before)


def test_a_test_cell_grades_in_ieee_precision_and_leaves_the_notebooks_tf32_legacy_flags(kernel_precision):
    """A notebook that turns TF32 on with the legacy flags: full marks, and its own reads of
    them after the cell still work and still say TF32."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    assert notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": _tf32_canary}) == STAGE1_POINTS
    assert torch.backends.cuda.matmul.allow_tf32 is True
    assert torch.backends.cudnn.allow_tf32 is True
    assert torch.get_float32_matmul_precision() == "high"


def test_a_test_cell_grades_in_ieee_precision_and_leaves_the_notebooks_fp32_precision(kernel_precision):
    """The same with PyTorch 2.9's fp32_precision API, read back after the cell."""
    import torch

    if not hasattr(torch.backends, "fp32_precision"):
        pytest.skip(f"PyTorch {torch.__version__} has no fp32_precision API (2.9 and later)")
    torch.backends.fp32_precision = "tf32"
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    assert notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": _tf32_canary}) == STAGE1_POINTS
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"
    assert torch.backends.fp32_precision == "tf32"
    assert torch.backends.mkldnn.matmul.fp32_precision == "tf32"


def test_a_test_cell_shows_the_students_prints_capped(capsys):
    import torch

    def softmax_naive(x):
        for _ in range(1_000):
            print("scores", x.shape)
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)

    score = notebook.grade_stage(CHAPTER.id, 1, {"torch": torch, "softmax_naive": softmax_naive})
    out = capsys.readouterr().out
    assert score == STAGE1_POINTS, out
    report = out.index("Your code printed, while the checks ran it:")
    assert out.count("scores torch.Size") == notebook.CappedOutput.LINES
    assert re.search(r"\.\.\. and \d{4,} more lines \(cut\)", out) and out.index(STAGE1_LABEL) > report
