"""Sandboxed runs computed ahead, waiting for nbgrader's :class:`~.execute.SandboxExecute`.

``make autograde`` (:mod:`autograder.frontends.instructors.autograde`) runs many students' notebooks at
once in worker processes; each worker sends its result back to the parent, which
:func:`offer`\\ s it here, in the parent's memory (never a file a worker or a submission
could touch). nbgrader's own serial pass then runs ``SandboxExecute`` in that same process,
which :func:`take`\\ s the student's run, and uses it only when it was computed from the very
cells nbgrader is grading (their :func:`~.stages.cells_key`); otherwise it runs the notebook
itself. :func:`reused_count` says how many runs were used (``make autograde``'s summary);
:func:`clear` forgets everything (before and after a class).

A plain ``nbgrader autograde`` never offers anything: every notebook runs in ``SandboxExecute``.
"""

from __future__ import annotations

# student id -> (cells_key, the sandboxed run's result)
_runs: dict[str, tuple[str, dict]] = {}
_reused = 0


def offer(student: str, key: str, result: dict) -> None:
    """The run of ``student``'s notebook, computed from the cells ``key`` describes."""
    _runs[str(student)] = (key, result)


def take(student: str, key: str) -> dict | None:
    """The run offered for ``student`` if it was computed from the cells ``key`` describes
    (counted by :func:`reused_count`), else None; either way the offer is used up."""
    global _reused
    offered = _runs.pop(str(student), None)
    if offered is None or offered[0] != key:
        return None
    _reused += 1
    return offered[1]


def reused_count() -> int:
    """How many offered runs :func:`take` handed out since the last :func:`clear`."""
    return _reused


def clear() -> None:
    """Forget every offered run and reset :func:`reused_count`."""
    global _reused
    _runs.clear()
    _reused = 0
