"""The submitted file ends a grading with the bytes it started with (:func:`submission_kept`)."""

from __future__ import annotations

import contextlib
from pathlib import Path


@contextlib.contextmanager
def submission_kept(path: str | Path):
    """Whatever runs inside, ``path`` ends with the bytes it had on entry (where Landlock is missing a
    submission can overwrite it); yields a list that holds a note when a restore was needed."""
    path = Path(path)
    original = path.read_bytes() if path.is_file() else None
    notes: list[str] = []
    try:
        yield notes
    finally:
        if original is not None and (not path.is_file() or path.read_bytes() != original):
            # What took its place is moved aside, never deleted: it may be all a student has left.
            aside = None
            if path.exists() or path.is_symlink():
                aside = free_name(path.with_name(f"{path.name}.changed-while-graded"))
                path.rename(aside)
            path.write_bytes(original)
            notes.append(f"the submission changed its own file ({path}) while it was graded; the original was "
                         "put back" + (f" and the changed one kept as {aside.name}" if aside else ""))


def free_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``, ...: the first name nothing has."""
    candidate, n = path, 0
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate
