"""What a worker starts with (autograder.sandbox.launch)."""

from __future__ import annotations

import json
import os

from autograder.sandbox.child import HANDSHAKE
from autograder.sandbox.launch import confinement_refusal, worker_environment
from autograder.sandbox.settings import Limits, Settings


def test_the_worker_gets_a_minimal_environment_and_one_handshake(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("AUTOGRADER_HINT_LEVEL", "2")
    settings = Settings(fences=False, limits=Limits(memory_bytes=123))
    env = worker_environment("/tmp/scratch", "cpu", settings, token="t0ken")
    assert "GITHUB_TOKEN" not in env and env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == env["TMPDIR"] == "/tmp/scratch" and env["OMP_NUM_THREADS"] == "1"
    assert [name for name in env if name.startswith("AUTOGRADER_")] == [HANDSHAKE]
    assert json.loads(env[HANDSHAKE]) == {
        "grader_pid": os.getpid(), "device": "cpu", "memory_bytes": 123, "token": "t0ken",
        "fences": False, "debug": False, "portable": False}
    assert env["CUDA_VISIBLE_DEVICES"] == ""
    gpu = worker_environment("/tmp/scratch", "cuda", Settings(), grader_pid=42)
    assert json.loads(gpu[HANDSHAKE])["memory_bytes"] == 0 and "CUDA_VISIBLE_DEVICES" not in gpu
    assert json.loads(gpu[HANDSHAKE])["grader_pid"] == 42


def test_the_font_list_is_kept_per_user_outside_the_scratch_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    env = worker_environment("/tmp/scratch", "cpu", Settings())
    assert env["MPLCONFIGDIR"] == str(tmp_path / ".cache" / "autograder-matplotlib")
    assert (tmp_path / ".cache" / "autograder-matplotlib").is_dir()
    monkeypatch.setenv("HOME", str(tmp_path / "file"))  # no cache folder can be made: a scan per grading
    (tmp_path / "file").write_text("")
    assert worker_environment("/tmp/scratch", "cpu", Settings())["MPLCONFIGDIR"] == "/tmp/scratch"


def test_an_unfenced_worker_is_refused_only_when_fences_are_required():
    fenced = {"landlock": {"files": True}, "seccomp": True}
    assert confinement_refusal({}, Settings()) is None
    required = Settings(require_confinement=True)
    assert confinement_refusal(fenced, required) is None
    assert "refusing to run the submission without its fences" in confinement_refusal({"seccomp": True}, required)
    assert confinement_refusal("not a dict", required) is not None


def test_a_restarted_grading_is_not_restarted_again(monkeypatch):
    """Where site's start-up sets a variable (a .pth file), the restarted process is not clean either:
    it grades as it is instead of starting itself again without end."""
    from autograder.sandbox import launch

    execs = []
    monkeypatch.setattr(launch.os, "execve", lambda *args: execs.append(args))
    monkeypatch.setattr(launch, "environment_is_clean", lambda: False)
    monkeypatch.setattr("autograder.sandbox.forkserver.available", lambda: True)
    monkeypatch.setattr(launch.sys, "orig_argv", ["python", "-m", "autograder", "grade", "x.ipynb"])
    launch.restart_clean(["grade", "x.ipynb"])
    assert len(execs) == 1
    monkeypatch.setattr(launch.sys, "orig_argv", execs[0][1])  # the restarted process's own command line
    launch.restart_clean(["grade", "x.ipynb"])
    assert len(execs) == 1
