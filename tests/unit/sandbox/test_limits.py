"""Limits (autograder.sandbox.limits): the defaults, declared once, and the cores a grading may use."""

from __future__ import annotations

import dataclasses
import os

import pytest

from autograder.sandbox.limits import Limits, cores


def test_the_defaults():
    limits = Limits()
    assert (limits.cell_seconds, limits.stage_seconds, limits.total_seconds) == (60.0, 60.0, 480.0)
    assert limits.memory_bytes == 8 * 2**30 and limits.threads == 1
    assert limits.scratch_bytes == 2 * 2**30 and limits.lanes == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.lanes = 1


def test_cores_are_those_this_process_may_run_on(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3})
    assert cores() == 2
