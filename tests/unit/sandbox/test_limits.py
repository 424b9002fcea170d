"""Limits (autograder.sandbox.limits): the defaults and the scratch limit from the environment."""

from __future__ import annotations

from autograder.sandbox.limits import Limits, positive_int_from_env

SCRATCH = "AUTOGRADER_SCRATCH_LIMIT"


def test_the_defaults(monkeypatch):
    monkeypatch.delenv(SCRATCH, raising=False)
    limits = Limits()
    assert (limits.cell_seconds, limits.stage_seconds, limits.total_seconds) == (60.0, 60.0, 480.0)
    assert limits.memory_bytes == 8 * 2**30 and limits.threads == 1
    assert limits.scratch_bytes == 2 * 2**30


def test_the_scratch_limit_comes_from_the_environment_when_each_limits_is_made(monkeypatch):
    monkeypatch.setenv(SCRATCH, str(48 * 2**20))
    assert Limits().scratch_bytes == 48 * 2**20
    monkeypatch.setenv(SCRATCH, "12345")
    assert Limits().scratch_bytes == 12345  # read again, not once at import
    assert Limits(scratch_bytes=7).scratch_bytes == 7  # an explicit value wins


def test_an_unusable_scratch_limit_falls_back_to_the_default(monkeypatch):
    for value in ("", "0", "-5", "lots", "1.5"):
        monkeypatch.setenv(SCRATCH, value)
        assert Limits().scratch_bytes == 2 * 2**30, value


def test_positive_int_from_env(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_TEST_BYTES", "4096")
    assert positive_int_from_env("AUTOGRADER_TEST_BYTES", 1) == 4096
    monkeypatch.delenv("AUTOGRADER_TEST_BYTES")
    assert positive_int_from_env("AUTOGRADER_TEST_BYTES", 1) == 1
    monkeypatch.setenv("AUTOGRADER_TEST_BYTES", "-4096")
    assert positive_int_from_env("AUTOGRADER_TEST_BYTES", 1) == 1


def test_two_lanes_where_there_are_two_cores_and_one_when_asked_or_alone(monkeypatch):
    import os

    from autograder.sandbox import limits as module

    monkeypatch.delenv("AUTOGRADER_LANES", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert Limits().lanes == 2  # never more: a stage's copy and the grader already share each lane
    monkeypatch.setenv("AUTOGRADER_LANES", "1")
    assert Limits().lanes == 1
    monkeypatch.setenv("AUTOGRADER_LANES", "many")
    assert Limits().lanes == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert module.default_lanes() == 1
