"""What a worker starts with (autograder.sandbox.launch)."""

from __future__ import annotations

import os

from autograder.sandbox import TEST_CELLS_OFF
from autograder.sandbox.launch import REQUIRE_CONFINEMENT, confinement_refusal, worker_environment
from autograder.sandbox.limits import Limits


def test_the_worker_gets_a_minimal_environment(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = worker_environment("/tmp/scratch", "cpu", Limits(memory_bytes=123, threads=3))
    assert "GITHUB_TOKEN" not in env and env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == env["TMPDIR"] == "/tmp/scratch"
    assert env[TEST_CELLS_OFF] == "1" and env["AUTOGRADER_GRADER_PID"] == str(os.getpid())
    assert env["AUTOGRADER_THREADS"] == env["OMP_NUM_THREADS"] == "3"
    assert env["AUTOGRADER_MEMORY_LIMIT"] == "123" and env["CUDA_VISIBLE_DEVICES"] == ""
    gpu = worker_environment("/tmp/scratch", "cuda", Limits())
    assert "AUTOGRADER_MEMORY_LIMIT" not in gpu and "CUDA_VISIBLE_DEVICES" not in gpu


def test_an_unfenced_worker_is_refused_only_when_fences_are_required(monkeypatch):
    fenced = {"landlock": {"files": True}, "seccomp": True}
    monkeypatch.delenv(REQUIRE_CONFINEMENT, raising=False)
    assert confinement_refusal({}) is None
    monkeypatch.setenv(REQUIRE_CONFINEMENT, "1")
    assert confinement_refusal(fenced) is None
    assert "refusing to run the submission without its fences" in confinement_refusal({"seccomp": True})
    assert confinement_refusal("not a dict") is not None
