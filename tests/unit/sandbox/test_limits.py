"""Limits (autograder.sandbox.settings): the defaults, declared once."""

from __future__ import annotations

import dataclasses

import pytest

from autograder.sandbox.settings import Limits


def test_the_defaults():
    limits = Limits()
    assert (limits.cell_seconds, limits.stage_seconds, limits.total_seconds) == (60.0, 60.0, 480.0)
    assert limits.memory_bytes == 8 * 2**30
    assert limits.scratch_bytes == 2 * 2**30
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.memory_bytes = 2
