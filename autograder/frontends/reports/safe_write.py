"""Output files written atomically, never in place of a folder, a link or a file this grader did not write;
and JSON files read back, never with a traceback."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from autograder.frontends.commands import Refused


def write_atomic(path: str | Path, text: str) -> None:
    """Whole or not at all: a reader never sees half a file, a failed write leaves no temporary
    file, and a link planted at ``path`` is replaced, never followed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: str | Path, data: dict) -> None:
    write_atomic(path, json.dumps(data, indent=2) + "\n")


def read_json(path: str | Path):
    """The data of a JSON file; None where it cannot be read or is not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Each of ``files`` (by path relative to ``folder``) written under ``folder``."""
    for relative, data in sorted(files.items()):
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


class OutputRefused(Refused):
    """The path given for an output file holds something else: nothing was written."""


def overwrite_refusal(path: str | Path, flag: str, ours: Callable[[bytes], bool]) -> str | None:
    """Why ``path`` may not take the output ``flag`` names (a folder, a link, a file not ours), or None."""
    path = Path(path)
    if path.is_symlink():
        return f"{flag} {path}: a link is there; give the path of a file"
    if path.is_dir():
        return f"{flag} {path}: that is a folder; give a file path inside it"
    if path.exists():
        if not path.is_file():
            return f"{flag} {path}: that is not a regular file"
        try:
            data = path.read_bytes()
        except OSError as exc:
            return f"{flag} {path}: cannot read what is there ({exc})"
        if data.strip() and not ours(data):
            return f"{flag} {path}: that file was not written by this grader; it was left as it is"
    return None


def is_results_json(data: bytes) -> bool:
    """Whether ``data`` is a results.json (a JSON object with ``tests``): one this grader may replace."""
    try:
        earlier = json.loads(data)
    except ValueError:
        return False
    return isinstance(earlier, dict) and "tests" in earlier


def write_output(path: str | Path, flag: str, ours: Callable[[bytes], bool], text: str) -> bool:
    """``text`` written to ``path`` unless it would replace something else; False (said on stderr) where not."""
    why = overwrite_refusal(path, flag, ours)
    try:
        if not why:
            write_atomic(path, text)
            return True
    except OSError as exc:
        why = f"could not write {flag} {path}: {exc}"
    print(f"error: {why}", file=sys.stderr)
    return False


def write_results(path: str | Path, data: dict) -> bool:
    return write_output(path, "--results", is_results_json, json.dumps(data, indent=2) + "\n")
