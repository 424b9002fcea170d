"""Preloads (autograder.sandbox.worker.run_preloads): what a Worker is given runs once per process."""

from __future__ import annotations

from autograder.sandbox.worker import run_preloads


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



def test_what_new_preloads_made_is_frozen_out_of_the_collectors_reach():
    import gc

    made = []
    before = gc.get_freeze_count()
    run_preloads((lambda: made.append([[]]),))
    frozen = gc.get_freeze_count()
    assert frozen > before and gc.is_tracked(made[0])
    run_preloads(())  # nothing new ran: nothing more is frozen (a frozen object freed meanwhile leaves the count)
    assert gc.get_freeze_count() <= frozen
