"""What the grading process imports before student code runs, named by the caller.

A preload is a call that imports (and warms up) what the grader would otherwise import
lazily later: the checks' hypothesis internals (:func:`autograder.core.engine.check_preloads`),
the report's rendering (:func:`autograder.frontends.reports.console.grader_preloads`, the full set
for a front end). Whoever builds a :class:`~autograder.sandbox.worker.Worker` passes them
(``Worker(..., preload=...)``); the worker runs them before the submission's first cell, so
that no module file is read after student code could have touched it (defence in depth
where Landlock is missing; tests/test_confinement.py checks that nothing is imported later).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Preload = Callable[[], None]
# The preloads this process has run: each runs once per process (a cache, not a registry:
# what runs is only ever what a Worker was given).
_preloaded: set = set()


def run_preloads(preload: Sequence[Preload]) -> None:
    """Run each of ``preload`` that this process has not run yet, in order."""
    for warm_up in preload:
        if warm_up not in _preloaded:
            _preloaded.add(warm_up)
            warm_up()


def collect_again() -> None:
    """The last preload of a grading process that started with the garbage collector off
    (``python -m autograder``: autograder/__main__.py). What it imported until now lives as long
    as it does, yet each collection walked all of it again while the imports grew it (about 0.3 s
    of CPU in torch's, the checks' and hypothesis's imports); frozen, no collection walks it again.
    Collection resumes for what grading allocates. In a process that never turned it off this
    only freezes what exists."""
    import gc

    gc.freeze()
    gc.enable()
