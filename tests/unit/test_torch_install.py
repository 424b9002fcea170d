"""Where `make` takes torch from (issue 26), read from the recipes `make -n` prints: nothing is
installed. On Linux without an NVIDIA GPU, PyTorch's CPU index; with a GPU, and on macOS and
Windows, pip's default; TORCH_INDEX_URL overrides both, and empty leaves pip's configuration."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.frontends.instructors import student_repo

REPO = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _env(path_first: Path | None = None) -> dict:
    # Neither make's own variables (under make check; make exports its command line's, such
    # as check-torch's TORCH, to every recipe) nor a TORCH_INDEX_URL set outside (.ci/run
    # exports it empty) may decide what the test reads.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS", "TORCH"))}
    if path_first:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    return env


def torch_installs(tmp_path: Path, *args: str, target: str = "venv", cwd: Path = REPO, env: dict | None = None) -> list[str]:
    """The pip commands of a fresh install that name torch (VENV: a folder that does not exist)."""
    venv = tmp_path / "fresh-venv"
    goal = {"venv": "venv", "student": f"{venv}/.student"}[target]
    proc = subprocess.run(["make", "-n", "--no-print-directory", goal, f"VENV={venv}", *args], cwd=cwd,
                          capture_output=True, text=True, env=env or _env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if "pip install" in line and re.search(r"\btorch\b", line)]


def index_of(line: str) -> str | None:
    match = re.search(r"--index-url '([^']*)'", line)
    return match.group(1) if match else None


@pytest.mark.parametrize("target", ["venv", "student"])
def test_linux_without_a_gpu_takes_torch_from_the_cpu_index_first(tmp_path, target):
    [torch_line] = torch_installs(tmp_path, "TORCH_HOST_OS=Linux", "TORCH_HOST_GPU=", target=target)
    assert index_of(torch_line) == CPU_INDEX
    assert "-c constraints.txt" in torch_line  # the pin, from the CPU index
    # then the grader, from pip's default index (the same pin keeps that torch)
    proc = subprocess.run(["make", "-n", "--no-print-directory", "venv", f"VENV={tmp_path / 'fresh-venv'}",
                           "TORCH_HOST_OS=Linux", "TORCH_HOST_GPU="], cwd=REPO, capture_output=True, text=True, env=_env())
    lines = proc.stdout.splitlines()
    grader = next(i for i, line in enumerate(lines) if '-e ".[' in line)
    assert lines.index(torch_line) < grader and "--index-url" not in lines[grader]


@pytest.mark.parametrize("host", [("Linux", "nvidia"), ("Darwin", ""), ("MINGW64_NT-10.0", ""), ("", "")],
                         ids=["linux-gpu", "macos", "windows-git-bash", "no-uname"])
def test_a_gpu_macos_and_windows_get_pips_default(tmp_path, host):
    os_name, gpu = host
    [torch_line] = torch_installs(tmp_path, f"TORCH_HOST_OS={os_name}", f"TORCH_HOST_GPU={gpu}")
    assert index_of(torch_line) is None and "--index-url" not in torch_line


def test_torch_index_url_overrides_and_empty_leaves_pips_configuration(tmp_path):
    linux = ("TORCH_HOST_OS=Linux", "TORCH_HOST_GPU=")
    [line] = torch_installs(tmp_path, *linux, "TORCH_INDEX_URL=")
    assert "--index-url" not in line
    [line] = torch_installs(tmp_path, *linux, "TORCH_INDEX_URL=file:///srv/my wheels/simple")
    assert index_of(line) == "file:///srv/my wheels/simple"
    [line] = torch_installs(tmp_path, "TORCH_HOST_OS=Linux", "TORCH_HOST_GPU=nvidia", "TORCH_INDEX_URL=https://example.org/cu130")
    assert index_of(line) == "https://example.org/cu130"
    # from the environment too, empty included (.ci/run)
    [line] = torch_installs(tmp_path, *linux, env=_env() | {"TORCH_INDEX_URL": ""})
    assert "--index-url" not in line


@pytest.mark.skipif(os.uname().sysname != "Linux" if hasattr(os, "uname") else True, reason="detects a Linux GPU")
def test_the_gpu_is_detected_through_nvidia_smi(tmp_path):
    """The real detection: a working nvidia-smi means a GPU; a failing one (no driver) does not,
    unless the driver's /proc entry says otherwise."""
    working, failing = tmp_path / "working", tmp_path / "failing"
    for folder, code in ((working, 0), (failing, 9)):
        folder.mkdir()
        (folder / "nvidia-smi").write_text(f"#!/bin/sh\necho 'GPU 0: stand-in'\nexit {code}\n")
        (folder / "nvidia-smi").chmod(0o755)
    [line] = torch_installs(tmp_path, env=_env(working))
    assert index_of(line) is None
    if not Path("/proc/driver/nvidia/version").exists():
        [line] = torch_installs(tmp_path, env=_env(failing))
        assert index_of(line) == CPU_INDEX


def test_the_student_makefile_keeps_the_cpu_index(tmp_path):
    """The students' repository's Makefile (students.mk, which this one includes) chooses the
    index by itself."""
    shutil.copy(REPO / student_repo.STUDENT_MAKEFILE, tmp_path / "Makefile")
    for name in ("constraints.txt", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path)
    [line] = torch_installs(tmp_path, "TORCH_HOST_OS=Linux", "TORCH_HOST_GPU=", target="student", cwd=tmp_path)
    assert index_of(line) == CPU_INDEX
    [line] = torch_installs(tmp_path, "TORCH_HOST_OS=Linux", "TORCH_HOST_GPU=", "TORCH_INDEX_URL=", target="student",
                            cwd=tmp_path)
    assert "--index-url" not in line


def test_check_torch_passes_the_index_and_is_not_part_of_make_check(tmp_path):
    proc = subprocess.run(["make", "-n", "--no-print-directory", "check-torch", "TORCH=2.15.0", "TORCH_HOST_OS=Linux",
                           "TORCH_HOST_GPU="], cwd=REPO, capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert f"tests/check_torch.py '2.15.0' --index-url '{CPU_INDEX}'" in proc.stdout
    makefile = (REPO / "Makefile").read_text()
    for target in ("check", "check-fast"):
        rule = re.search(rf"^{target}:(.*)$", makefile, re.M).group(1)
        assert "check-torch" not in rule
    usage = subprocess.run(["make", "--no-print-directory", "check-torch", "TORCH="], cwd=REPO, capture_output=True,
                           text=True, env=_env(), timeout=60)
    assert usage.returncode != 0 and "usage: make check-torch TORCH=" in usage.stdout
