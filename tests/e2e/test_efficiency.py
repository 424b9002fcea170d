"""Issue 7: the bonus stage 8 (efficiency lab), bonus accounting, the benchmarks, and the
grader's start-up work that keeps `make test` fast."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import RELEASE, REPO, SOLUTION, grade_in_process
from tools import bench_attention

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.results import StageResult

STAGES, stage, checks_for = CHAPTER.stages, CHAPTER.stage, CHAPTER.checks_for

# The efficiency lab, where the course keeps it: an instructor may delete its section from the
# source notebook, and then there is neither a stage to grade nor a solution cell to mutate.
BONUS = next((s for s in STAGES if s.id == "efficiency"), None)
needs_the_bonus = pytest.mark.skipif(BONUS is None, reason="the course has no efficiency lab (its section was deleted)")


def _solution_cell(grade_id: str) -> str:
    cells = json.loads(SOLUTION.read_text())["cells"]
    return next("".join(c["source"]) for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


STAGE8_SOLUTION = _solution_cell("stage8_efficiency_solution") if BONUS else ""


def grade_stage8(source: str) -> StageResult:
    """Stage 8 on ``source`` in this process (the notebook's in-kernel path: same checks)."""
    namespace = {"__name__": "__main__"}
    exec(compile("import math\nimport torch\nfrom torch import nn\n" + source, "<stage 8>", "exec"), namespace)
    return grade_in_process(CHAPTER, BONUS, namespace)


@needs_the_bonus
def test_the_solution_earns_the_whole_bonus():
    result = grade_stage8(STAGE8_SOLUTION)
    assert result.score == CHAPTER.points(BONUS), [(c.check.id, c.message) for c in result.failures]


# (what the solution says, what a wrong submission says instead, the check that must fail,
#  words of the hint it must show)
MUTANTS = {
    "naive softmax": ("shifted = x - x.max(dim=-1, keepdim=True).values", "shifted = x", "8.2", "overflow"),
    "global maximum": ("shifted = x - x.max(dim=-1, keepdim=True).values", "shifted = x - x.max()", "8.2",
                       "own maximum"),
    "minimum subtracted": ("shifted = x - x.max(dim=-1, keepdim=True).values",
                           "shifted = x - x.min(dim=-1, keepdim=True).values", "8.2", "not the minimum"),
    "qkv blocks in another order": ("queries, keys, values = self.qkv(x).split(self.d_out, dim=-1)",
                                    "values, keys, queries = self.qkv(x).split(self.d_out, dim=-1)", "8.4",
                                    "in this order"),
    "qkv read per head": ("queries, keys, values = self.qkv(x).split(self.d_out, dim=-1)  # one matrix product",
                          "queries, keys, values = self.qkv(x).view(b, num_tokens, self.num_heads, -1)"
                          ".split(self.head_dim, dim=-1)\n        queries, keys, values = (t.reshape(b, num_tokens, "
                          "self.d_out) for t in (queries, keys, values))", "8.4", "per head"),
    "fused without proj": ("return self.proj(context_vec.contiguous().view(b, num_tokens, self.d_out))",
                           "return context_vec.contiguous().view(b, num_tokens, self.d_out)", "8.4", "out_proj"),
    "three linears kept": ("self.proj = nn.Linear(d_out, d_out)\n",
                           "self.proj = nn.Linear(d_out, d_out)\n        self.W_query = nn.Linear(d_in, d_out)\n",
                           "8.3", "one matrix multiplication"),
    "bytes without the batch": ("return batch_size * num_heads", "return num_heads", "8.5", "batch_size"),
    "bytes as a float": ("return batch_size * num_heads * num_tokens * num_tokens * bytes_per_value",
                         "return batch_size * num_heads * num_tokens * num_tokens * bytes_per_value / 1",
                         "8.5", "int"),
    "inverted boolean mask": ("is_causal=True, dropout_p", "attn_mask=torch.ones(num_tokens, num_tokens, "
                              "dtype=torch.bool).triu(1), dropout_p", "8.6", "may attend"),
    "float mask": ("is_causal=True, dropout_p", "attn_mask=torch.ones(num_tokens, num_tokens).triu(1), dropout_p",
                   "8.6", "added"),
    "dropout in eval mode": ("dropout_p=self.dropout if self.training else 0.0", "dropout_p=self.dropout", "8.6",
                             "self.training"),
    "no fused kernel": ("context_vec = F.scaled_dot_product_attention(",
                        "context_vec = (lambda q, k, v, is_causal, dropout_p: torch.softmax(q @ k.transpose(2, 3) "
                        "/ math.sqrt(q.shape[-1]) + torch.full((q.shape[2], q.shape[2]), -torch.inf).triu(1), dim=-1)"
                        " @ v)(", "8.7", "scaled_dot_product_attention"),
}


@needs_the_bonus
@pytest.mark.parametrize("name", list(MUTANTS))
def test_stage8_catches_a_wrong_submission(name):
    old, new, code, hint = MUTANTS[name]
    assert STAGE8_SOLUTION.count(old) == 1, f"the solution changed: update the mutant {name!r}"
    result = grade_stage8(STAGE8_SOLUTION.replace(old, new))
    failed = {c.check.id: c for c in result.failures}
    assert code in failed, f"{name}: {[(c.check.id, c.message) for c in result.failures]}"
    assert hint.lower() in failed[code].hint.lower(), failed[code].hint
    assert result.score < CHAPTER.points(BONUS)


def test_device_cpu_is_resolved_without_importing_torch():
    code = ("import sys, autograder.frontends.students.cli, autograder.sandbox.worker, autograder.sandbox.loader; "
            "print(autograder.frontends.students.cli.resolve_device('cpu'), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["cpu", "False"]


@needs_the_bonus  # the fused QKV and SDPA classes it times are the efficiency lab's solutions
def test_bench_times_every_implementation_of_the_solutions(tmp_path, capsys):
    tiny = {"cpu": bench_attention.Plan(repeats=1, head_counts=(1, 2), contexts=(8, 16), sweep_batch=1, sweep_tokens=8,
                              min_seconds=0)}
    png = tmp_path / "bench.png"
    assert bench_attention.bench_attention(SOLUTION, ["cpu"], png, tiny, bench_attention.Setting(2, 16, 24, 4)) == 0
    out = capsys.readouterr().out
    for label, (name, _, _) in bench_attention.IMPLEMENTATIONS.items():
        assert f"| {label} (`{name}`) |" in out
    assert "weight split / wrapper at GPT-2 size" not in out  # the headline was not GPT-2's here
    assert "CPU weight split / wrapper" in out and "CPU SDPA / weight split" in out
    assert png.read_bytes().startswith(b"\x89PNG")


def test_bench_on_the_release_says_what_is_missing(capsys):
    classes, notes = bench_attention.load_implementations(RELEASE)
    assert classes == {}
    assert len(notes) >= len(bench_attention.IMPLEMENTATIONS) and all("skipped" in n for n in notes[:4])
