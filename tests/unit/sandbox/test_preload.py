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


def test_collect_again_turns_collection_back_on_and_freezes_what_exists():
    import gc

    from autograder.sandbox.preload import collect_again

    was_enabled = gc.isenabled()
    gc.disable()
    made = [object() for _ in range(1000)]  # noqa: F841 (alive, so frozen rather than collected)
    frozen_before = gc.get_freeze_count()
    try:
        collect_again()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + 1000
    finally:
        if not was_enabled:
            gc.disable()


def test_imports_uncollected_freezes_and_restores_the_collector_as_it_was():
    import gc

    from autograder.sandbox.child import imports_uncollected

    was_enabled = gc.isenabled()
    try:
        for before in (True, False):
            (gc.enable if before else gc.disable)()
            with imports_uncollected():
                assert not gc.isenabled()
                made = [[] for _ in range(100)]
                frozen = gc.get_freeze_count()
            assert gc.isenabled() is before
            assert gc.get_freeze_count() > frozen  # what the block made is frozen
            del made
    finally:
        (gc.enable if was_enabled else gc.disable)()
