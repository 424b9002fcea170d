"""What the grading process imports before student code runs, named by the caller
(``Worker(..., preload=...)``): no module file is read after student code could have touched it
(defence in depth where Landlock is missing; tests/e2e/test_confinement.py)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence

Preload = Callable[[], None]
_preloaded: set = set()  # each runs once per process


def run_preloads(preload: Sequence[Preload]) -> None:
    """Run each of ``preload`` that this process has not run yet, in order; then freeze what they
    imported out of the garbage collector's reach (it lives as long as the process)."""
    new = [warm_up for warm_up in preload if warm_up not in _preloaded]
    for warm_up in new:
        _preloaded.add(warm_up)
        warm_up()
    if new:
        gc.freeze()
