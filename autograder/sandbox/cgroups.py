"""One memory budget and process limit for a worker and all it starts (cgroup v2 where delegated,
else v1), joined before any student code runs; else the per-process limits remain."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from autograder.sandbox import oslayer

TASKS = 128  # processes and threads of the worker and all it starts, with room for a few of the notebook's
_FILES = {"v2": {"memory": "memory.max", "pids": "pids.max"}, "v1": {"memory": "memory.limit_in_bytes", "pids": "pids.max"}}


def _own_groups() -> dict[str, str]:
    """This process's group per hierarchy: "0" for cgroup v2, else the v1 controller names."""
    groups: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in (controllers or "0").split(","):  # v2's line names no controller
                groups[name] = path
    return groups


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(file system type, mount point, super options) of each cgroup mount, from mountinfo."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if "-" not in fields:
                continue
            tail = fields[fields.index("-") + 1:]
            if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((tail[0], fields[4], set(tail[2].split(","))))
    return found


def _clear_stale(parent: Path) -> None:
    """Remove the empty groups left in ``parent`` by graders that no longer run (killed from outside)."""
    with contextlib.suppress(OSError):
        for group in parent.glob("autograder-*-*"):
            owner = group.name.split("-")[1]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):
                    group.rmdir()


class Budget:
    """The control group(s) of one worker (none where none could be made: then nothing happens)."""

    def __init__(self, memory_bytes: int | None, tasks: int = TASKS):
        # memory_bytes None: no memory budget (a GPU worker: CUDA's host memory is the driver's)
        values = {"memory": str(memory_bytes)} if memory_bytes is not None else {}
        values["pids"] = str(tasks)  # controller -> its limit
        self.version = ""
        self.held: dict[str, str] = {}  # what the groups limit, in words (describe)
        self.groups: list[Path] = []
        try:
            self._make(f"autograder-{os.getpid()}-{uuid.uuid4().hex[:12]}", values)
        except OSError:
            self.close()
            self.version, self.held, self.groups = "", {}, []

    def _make(self, name: str, values: dict[str, str]) -> None:
        own, mounts = _own_groups(), _mounts()
        unified = next((point for kind, point, _ in mounts if kind == "cgroup2"), None)
        if unified is not None and "0" in own:
            control = Path(unified, own["0"].lstrip("/"), "cgroup.subtree_control")
            if set(values) <= (set(control.read_text().split()) if control.exists() else set()):
                self._group(control.parent / name, "v2", values)
                return
        for controller, value in values.items():
            point = next((p for kind, p, options in mounts if kind == "cgroup" and controller in options), None)
            if point is not None and controller in own:
                self._group(Path(point, own[controller].lstrip("/"), name), "v1", {controller: value})

    def _group(self, group: Path, version: str, values: dict[str, str]) -> None:
        _clear_stale(group.parent)
        group.mkdir()
        self.groups.append(group)
        self.version = version
        for controller, value in values.items():
            (group / _FILES[version][controller]).write_text(value)
            self.held[controller] = value

    def add(self, pid: int) -> bool:
        """Move ``pid`` (a worker that has run no student code yet) into every group."""
        try:
            for group in self.groups:
                (group / "cgroup.procs").write_text(str(int(pid)))
        except OSError:
            return False
        return bool(self.groups)

    def members(self) -> set[int]:
        pids: set[int] = set()
        for group in self.groups:
            with contextlib.suppress(OSError, ValueError):
                pids |= {int(p) for p in (group / "cgroup.procs").read_text().split()}
        return pids

    def describe(self) -> dict:
        """What the groups limit, for the reports (confinement.describe): {} for nothing."""
        if not self.groups:
            return {}
        found = {"version": self.version}
        if "memory" in self.held:
            found["memory"] = f"{int(self.held['memory']) / 2**30:g} GiB"
        if "pids" in self.held:
            found["tasks"] = self.held["pids"]
        return found

    def close(self, belongs=None, seconds: float = 2.0) -> None:
        """End what is left in the groups (what ``belongs`` rejects goes back to the parent) and remove them."""
        give_up = time.monotonic() + seconds
        for group in list(reversed(self.groups)):
            while group.exists() and time.monotonic() < give_up:
                for pid in self.members():
                    if belongs is None or belongs(pid):
                        oslayer.kill_pid(pid)
                    else:
                        with contextlib.suppress(OSError):
                            (group.parent / "cgroup.procs").write_text(str(pid))
                try:
                    group.rmdir()
                except OSError:
                    time.sleep(0.01)
        self.groups = [g for g in self.groups if g.exists()]
