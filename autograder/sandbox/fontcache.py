"""matplotlib's font list for the worker, kept between gradings by the grader.

The worker's matplotlib keeps its caches in the worker's scratch folder (``MPLCONFIGDIR``,
:mod:`autograder.sandbox.launch`), a new folder each grading, so every worker scanned the
system's fonts again while importing what the notebook imports: about 0.2 s of CPU before the
first cell can run (``make bench-grader``). The grader keeps the list matplotlib wrote in a
cache folder of its own (:func:`cache_folder`) and copies it into each new scratch folder
before the worker starts (:func:`copy_in`).

A list is kept only from a scratch folder no student code has run in (:func:`keep_from`): the
worker writes it while importing matplotlib, before its fences go up and before it receives
the notebook, and the grader copies it once the worker says it is ready, before it sends the
first cell. So a submission cannot plant a list that a later grading (another student's) would
read. Nothing here is read by the grader itself: the list is matplotlib's, in the worker.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

# matplotlib's file name for its font list (font_manager: f"fontlist-v{FontManager.__version__}.json")
_FONT_LIST = re.compile(r"fontlist-v[0-9][0-9.]{0,20}\.json")
_MOST_BYTES = 4 * 2**20  # a real list is tens of kilobytes


def cache_folder() -> Path:
    """``ch03-attention-autograder`` in the user's cache folder (``$XDG_CACHE_HOME`` or
    ``~/.cache``): matplotlib's own cache sits beside it."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ch03-attention-autograder"


def _font_lists(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return [Path(e.path) for e in entries if _FONT_LIST.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _read(path: Path) -> bytes | None:
    """The file's bytes, when it is a plain file (not a link) of a sensible size."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(_MOST_BYTES + 1)
    return data if 0 < len(data) <= _MOST_BYTES else None


def _write_new(folder: Path, name: str, data: bytes) -> None:
    """``folder/name`` with ``data``, written whole or not at all; an existing file is left as it is."""
    target = folder / name
    if target.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".incoming-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.link(temporary, target)  # fails if another grading put it there first: theirs stays
    except OSError:
        pass
    finally:
        os.unlink(temporary)


def copy_in(scratch: str | os.PathLike) -> None:
    """Copy the kept font lists into a new worker's scratch folder (never raises)."""
    try:
        for path in _font_lists(cache_folder()):
            data = _read(path)
            if data is not None:
                _write_new(Path(scratch), path.name, data)
    except OSError:
        pass


def keep_from(scratch: str | os.PathLike) -> None:
    """Keep the font lists a worker wrote in ``scratch`` that the cache lacks. Call it only
    before any student code ran with that folder (never raises)."""
    try:
        folder = cache_folder()
        kept = {p.name for p in _font_lists(folder)}
        for path in _font_lists(Path(scratch)):
            if path.name not in kept:
                data = _read(path)
                if data is not None:
                    _write_new(folder, path.name, data)
    except OSError:
        pass
