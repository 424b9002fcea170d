"""Preloads (autograder.sandbox.preload): what a Worker is given runs once per process."""

from __future__ import annotations

from autograder.sandbox.preload import run_preloads


def test_each_preload_runs_once_in_order():
    ran = []

    def a():
        ran.append("a")

    def b():
        ran.append("b")

    run_preloads((a,))
    run_preloads((a, b))
    run_preloads([b, a])
    assert ran == ["a", "b"]
    run_preloads(())
    assert ran == ["a", "b"]

