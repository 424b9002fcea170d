"""Where students run the grader (issue 17), the fast part: devices (CUDA, Apple's MPS, CPU)
with their availability faked, tensors that cross to the grader as float32 on the CPU, the
portable OS layer's pipes, the PyTorch range and pin. The slow part (venvs, a clone under an odd
path, the forced fallback end to end, the Makefile's quoting of paths) is tests/e2e/test_platforms.py."""

from __future__ import annotations

import os
import re
import time

import pytest
import torch
from support import REPO, makefile_text
from torch.overrides import TorchFunctionMode

from autograder.frontends import commands
from autograder.frontends.students import cli
from autograder.sandbox import confinement, oslayer, wire
from autograder.sandbox.workspace import on_device

# --- devices -------------------------------------------------------------------------------

@pytest.fixture
def devices(monkeypatch):
    """Set which accelerators the grader believes it has."""
    def have(cuda: bool, mps: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(cli, "_mps_available", lambda: mps)
    return have


@pytest.mark.parametrize("cuda, mps, expected", [(True, True, "cuda"), (True, False, "cuda"),
                                                 (False, True, "mps"), (False, False, "cpu")])
def test_auto_picks_cuda_then_mps_then_cpu(devices, cuda, mps, expected):
    devices(cuda, mps)
    assert cli.resolve_device("auto") == expected


def test_mps_is_used_when_asked_and_present(devices):
    devices(False, True)
    assert cli.resolve_device("mps") == "mps"
    assert cli.resolve_device("cpu") == "cpu"


def test_mps_missing_is_refused_naming_mps(devices):
    devices(True, False)
    with pytest.raises(cli.NoDevice, match="--device mps: Apple's MPS"):
        cli.resolve_device("mps")


def test_device_mps_here_exits_2_naming_mps(tmp_path, capsys):
    if cli._mps_available():
        pytest.skip("this machine has MPS")
    submission = tmp_path / "Copy of ch03_attention (1).py"
    submission.write_text("def softmax_naive(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n")
    assert cli.main([str(submission), "--device", "mps", "--stage", "1"]) == 2
    assert "--device mps: Apple's MPS (Metal) GPU is not available here" in capsys.readouterr().out


def test_device_mps_is_a_choice_of_every_front_end():
    assert commands.parse("grade", ["x.ipynb", "--device", "mps"]).device == "mps"
    makefile = makefile_text()
    assert re.search(r"--device \$\(DEVICE\)", makefile)


# --- float32 on the CPU before any float64 ----------------------------------------------------

class Calls(TorchFunctionMode):
    """Records the tensor methods called, with the device or dtype they were asked for."""

    def __init__(self, fake_move_to: str | None = None):
        super().__init__()
        self.calls: list[tuple[str, object, torch.dtype | None]] = []
        self.fake_move_to = fake_move_to

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        target = next((a for a in (*args[1:], *kwargs.values()) if isinstance(a, (str, torch.device, torch.dtype))), None)
        source_dtype = args[0].dtype if args and isinstance(args[0], torch.Tensor) else None
        self.calls.append((name, str(target) if target is not None else None, source_dtype))
        if self.fake_move_to and name == "to" and str(target) == self.fake_move_to:
            return args[0]  # no such device here: the move is recorded, not made
        return func(*args, **kwargs)


@pytest.mark.parametrize("tensor", [torch.randn(3, 4), torch.randn(2, 2, dtype=torch.complex64),
                                    torch.randn(2, dtype=torch.float64)], ids=["float32", "complex", "float64"])
def test_an_answer_moves_to_the_cpu_before_any_float64_conversion(tensor):
    """On MPS there is no float64: the worker must send what it has to the CPU first."""
    with Calls() as mode:
        frame = wire.encode({"out": tensor})
    names = [name for name, _, _ in mode.calls]
    to_cpu = next(i for i, (name, target, _) in enumerate(mode.calls) if name == "to" and target == "cpu")
    float64_at = [i for i, (name, target, _) in enumerate(mode.calls)
                  if name == "double" or (name == "to" and target == "torch.float64")]
    assert all(i > to_cpu for i in float64_at), names
    assert frame  # and it is still a frame


def test_float64_input_reaches_mps_as_float32():
    """The grader's float64 tensors become float32 on the CPU, then move: never float64 to MPS."""
    x = torch.randn(3, 3, dtype=torch.float64)
    with Calls(fake_move_to="mps") as mode:
        moved = on_device(x, torch.device("mps"))
    moves = [dtype for name, target, dtype in mode.calls if name == "to" and target == "mps"]
    assert moves == [torch.float32] and moved.dtype == torch.float32
    with Calls(fake_move_to="cuda") as mode:
        on_device(x, torch.device("cuda"))
    assert [d for n, t, d in mode.calls if n == "to" and t == "cuda"] == [torch.float64]  # CUDA keeps float64


# --- the portable OS layer ---------------------------------------------------------------

@pytest.fixture
def portable(monkeypatch):
    monkeypatch.setattr(oslayer, "forced_portable", True)


def test_the_switch_turns_every_linux_piece_off(portable):
    assert not oslayer.is_linux() and not oslayer.is_posix()
    assert not oslayer.set_resource_limit("FSIZE", 2**30)
    fences = confinement.confine("/tmp", "/nonexistent")
    assert confinement.describe(fences) == "unconfined" and not confinement.is_confined(fences)


def test_pipes_keep_deadlines_without_select(portable):
    """Windows' select takes no pipes: the reader thread keeps the deadline, frames stay whole."""
    read_fd, write_fd = os.pipe()
    try:
        reader = wire.Reader(read_fd)
        assert reader._pump is not None
        started = time.monotonic()
        with pytest.raises(wire.WireTimeout):
            reader.read(time.monotonic() + 0.3)
        assert 0.25 < time.monotonic() - started < 5
        wire.write(write_fd, {"x": torch.arange(5.0)}, time.monotonic() + 5)
        assert reader.read(time.monotonic() + 5)["x"].tolist() == [0, 1, 2, 3, 4]
        os.write(write_fd, b"left over" + wire.STAGE_OVER)
        assert reader.skip_to(wire.STAGE_OVER, time.monotonic() + 5)
        os.write(write_fd, wire.STAGE_OVER + b"more")
        time.sleep(0.2)
        assert not reader.skip_to(wire.STAGE_OVER, time.monotonic() + 5)  # out of step
    finally:
        os.close(write_fd)
    for _ in range(2):  # and stays closed: no wait for a chunk that never comes
        with pytest.raises(wire.WireError, match="closed"):
            reader.read(time.monotonic() + 5)
    os.close(read_fd)


def test_a_write_nobody_reads_times_out(portable):
    read_fd, write_fd = os.pipe()
    try:
        with pytest.raises(wire.WireTimeout):
            wire.write(write_fd, {"x": torch.zeros(2**20)}, time.monotonic() + 0.5)  # far more than a pipe holds
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_linux_only_modules_are_imported_only_in_the_os_layers():
    """resource, prctl (ctypes), os.killpg, signal.SIGKILL and select on pipes: one place."""
    allowed = {"oslayer.py": None, "confinement.py": {"import ctypes", "prctl", "/proc/"},  # seccomp, Landlock
               "wire.py": {"import select"},  # behind oslayer.is_posix()
               "child.py": {"os.fork()"},  # behind oslayer.is_linux()
               # Linux only (forkserver.available()): forks workers, signals them through pidfds
               "forkserver.py": {"import select", "os.fork()", "SIGKILL", "/proc/"},
               # Linux only (the Worker makes a Budget where oslayer.is_linux()): reads its own groups
               "cgroups.py": {"/proc/"}}
    for path in sorted((REPO / "autograder").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = {w for w in ("import resource", "import ctypes", "os.killpg", "SIGKILL", "import select",
                             "os.fork()", "prctl", "/proc/") if w in text}
        if path.parent.name == "sandbox" and path.name in allowed:
            assert allowed[path.name] is None or found <= allowed[path.name], (path.name, found)
        elif path.name != "strays.py":
            assert not found, (path, found)
        else:  # the grader side reads /proc (stray processes) where it exists, and nothing else
            assert found <= {"/proc/"}, found


# --- the PyTorch range and the pin ---------------------------------------------------------

def test_pyproject_declares_a_range_and_make_pins_the_release():
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"torch>=2.3"' in pyproject and "torch==" not in pyproject
    assert re.search(r"^torch==2\.13\.0$", (REPO / "constraints.txt").read_text(encoding="utf-8"), re.M)
    makefile = makefile_text()
    installs = re.findall(r"pip install .*", makefile)
    assert installs and all("-c $(CONSTRAINTS)" in line for line in installs if "-e" in line), installs
