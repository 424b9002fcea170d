"""The worker's control groups where none can be made: nothing changes, nothing is claimed."""

from __future__ import annotations

from autograder.sandbox import cgroups, confinement


def test_no_cgroup_file_system_means_no_group_and_no_claim(monkeypatch):
    monkeypatch.setattr(cgroups, "_mounts", lambda: [])
    budget = cgroups.Budget(8 * 2**30)
    assert budget.groups == [] and budget.describe() == {}
    assert budget.add(12345) is False
    budget.close()  # nothing to do, and no error


def test_a_group_that_cannot_be_made_is_no_group(monkeypatch, tmp_path):
    """Not root and nothing delegated: mkdir fails, the budget holds nothing."""
    hierarchy = tmp_path / "memory"
    hierarchy.mkdir()
    hierarchy.chmod(0o500)
    monkeypatch.setattr(cgroups, "_mounts", lambda: [("cgroup", str(hierarchy), {"memory"})])
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"memory": "/missing/parent"})
    budget = cgroups.Budget(8 * 2**30)
    assert budget.groups == [] and budget.describe() == {}


def test_the_reports_name_the_group_only_when_the_worker_is_in_one():
    fences = {"landlock": {"files": True, "landlock_abi": 7}, "seccomp": True}
    assert "cgroup" not in confinement.describe(fences)
    with_group = {**fences, "cgroup": {"version": "v1", "memory": "8 GiB", "tasks": "128"}}
    assert "cgroup v1: 8 GiB of memory and 128 tasks for the worker and all it starts" in \
        confinement.describe(with_group)


def test_groups_left_by_graders_that_no_longer_run_are_removed(tmp_path):
    """Only an owner that is gone, only empty groups (rmdir takes no other), never a stranger's."""
    import os

    parent = tmp_path / "pids"
    parent.mkdir()
    gone, alive, stranger = (parent / "autograder-999999999-abc", parent / f"autograder-{os.getpid()}-def",
                             parent / "mine-1-2")
    for group in (gone, alive, stranger):
        group.mkdir()
    cgroups._clear_stale(parent)
    assert not gone.exists() and alive.exists() and stranger.exists()
