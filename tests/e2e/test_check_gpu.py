"""make check-gpu (tests/check_gpu.py): its dry run on the CPU prints the table, the fences, the
stage times and the last line, with only what the borrowed GPU machine's Python holds (no
nbformat, nbgrader, traitlets or IPython); it tells a difference; without CUDA it says so."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from support import REPO, TESTS

from autograder.chapters.ch03_attention import CHAPTER

# What the GPU machine lacks: the command must not need it.
ABSENT = ("nbformat", "nbgrader", "nbclient", "traitlets", "IPython", "jupyter_core", "yaml")


def run_check_gpu(tmp_path, *args: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text("import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in ABSENT))
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, str(TESTS / "check_gpu.py"), "--out", str(tmp_path / "out"), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_the_dry_run_grades_the_tf32_canary_alike_as_written_and_with_tf32_on(tmp_path):
    proc = run_check_gpu(tmp_path, "--cpu-only", "--only", "tf32_at_the_top", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    full = f"{CHAPTER.max_score:g}/{CHAPTER.max_score:g}"
    assert "| correct tf32_at_the_top_style | " + f"{full} | {full} | yes |" in lines
    assert any(line.startswith("- CPU: ") for line in lines), "the fences in force"
    assert sum(line.startswith("| Stage ") for line in lines) == len(CHAPTER.stages), "a time row per stage"
    assert lines[-1] == "1 cases, 0 differ"
    assert (tmp_path / "out" / "check-gpu.md").read_text().strip().splitlines()[-1] == lines[-1]
    assert len((tmp_path / "out" / "check-gpu.jsonl").read_text().splitlines()) == 2


def test_a_check_passed_on_one_device_only_is_a_difference():
    sys.path.insert(0, str(TESTS))
    import check_gpu

    cpu = {"device": "cpu", "variant": "as written", "passed": ["1.1", "1.2"], "error": ""}
    gpu = {"device": "cuda", "variant": "TF32 on", "passed": ["1.1"], "error": ""}
    assert check_gpu.differences([cpu, dict(cpu, variant="TF32 on")]) == ""
    assert check_gpu.differences([cpu, gpu]) == "GPU TF32 on: fails 1.2"


def test_without_cuda_it_says_how_to_run_the_dry_run(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA is here: make check-gpu runs for real")
    proc = run_check_gpu(tmp_path)
    assert proc.returncode == 2
    assert "make check-gpu DEVICE=cpu" in proc.stderr
