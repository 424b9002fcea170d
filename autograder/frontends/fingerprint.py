"""The grader's fingerprint: tamper evidence where the student can edit the grader. One SHA-256 over
a part per grader file, the build files, the grade workflow and each locked cell of the notebook."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

# Written by make student-repo into the student repository; never part of the fingerprint.
RELEASE_FILE = "autograder/release_fingerprint.json"
WORKFLOW = ".github/workflows/grade.yml"
GRADER_EXTRA = ("pyproject.toml", "constraints.txt", "Makefile", WORKFLOW)
LOCKED_CELL_PREFIX = "notebook cell "


def _is_grader_file(relative: str) -> bool:
    parts = relative.split("/")
    return (parts[0] == "autograder" and "__pycache__" not in parts and not relative.endswith((".pyc", ".pyo"))
            and relative != RELEASE_FILE and not any(p.startswith(".") for p in parts))


def grader_files(root: Path) -> list[str]:
    """The grader package's files under ``root``: what a student repository ships."""
    found = (p.relative_to(root).as_posix() for p in (Path(root) / "autograder").rglob("*")
             if p.is_file() and not p.is_symlink())
    return sorted(f for f in found if _is_grader_file(f))


def grader_bundle(root: Path) -> dict[str, bytes]:
    """The grader as every route ships it: its package files git tracks (all outside git), so that a scratch
    file never reaches the students, then pyproject.toml and constraints.txt."""
    paths = grader_files(root)
    with suppress(OSError, subprocess.SubprocessError):
        proc = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "autograder"], capture_output=True,
                              timeout=60, check=True)
        tracked = set(proc.stdout.decode("utf-8", "replace").split("\0"))
        paths = [p for p in paths if p in tracked]
    return {path: (Path(root) / path).read_bytes() for path in [*paths, "pyproject.toml", "constraints.txt"]}


def locked_cells(notebook: bytes) -> dict[str, str]:
    """The notebook's locked cells as parts, ``{"notebook cell <grade_id>": sha256 of its source}``; {} for a damaged notebook."""
    try:
        cells = json.loads(notebook).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return {}
    found = {}
    for cell in cells if isinstance(cells, list) else []:
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if isinstance(meta, dict) and meta.get("locked") and isinstance(meta.get("grade_id"), str):
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            found[LOCKED_CELL_PREFIX + meta["grade_id"]] = _sha(source.encode("utf-8"))
    return found


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parts_of(files: Mapping[str, bytes], notebook_path: str) -> dict[str, str]:
    grader = {path: _sha(data) for path, data in files.items() if _is_grader_file(path) or path in GRADER_EXTRA}
    return grader | locked_cells(files.get(notebook_path, b""))


def digest(parts: Mapping[str, str]) -> str:
    return _sha("".join(f"{name}\0{parts[name]}\n" for name in sorted(parts)).encode("utf-8"))


def read_tree(root: Path, notebook_path: str, graded: Path | None = None) -> dict[str, bytes]:
    """The fingerprinted files of a checkout; ``graded``, a renamed notebook, stands for the release's."""
    files = {}
    sources = {relative: root / relative for relative in [*grader_files(root), *GRADER_EXTRA]}
    sources[notebook_path] = root / notebook_path if graded is None else Path(graded)
    for relative, path in sources.items():
        if path.is_file() and not path.is_symlink():
            with suppress(OSError):
                files[relative] = path.read_bytes()
    return files


@dataclass
class Verdict:
    """The running grader against the release."""
    fingerprint: str
    release: str | None  # None: no release fingerprint to compare with
    changed: list[str] = field(default_factory=list)  # parts that differ, were added or are missing

    @property
    def status(self) -> str:
        return "unknown" if self.release is None else "release" if self.fingerprint == self.release else "modified"

    @property
    def words(self) -> str:
        if self.status == "release":
            return "grader unmodified (matches the release)"
        if self.status == "unknown":
            return "no release fingerprint to compare with (not a student repository)"
        shown = ", ".join(self.changed[:8]) + (f" and {len(self.changed) - 8} more" if len(self.changed) > 8 else "")
        return f"grader modified: {shown or 'the release fingerprint file was edited'}"


def compare(parts: Mapping[str, str], release_parts: Mapping[str, str] | None, *, notebook_found: bool = True) -> Verdict:
    if not notebook_found:  # the grader's parts alone: a missing notebook is no modified grader
        parts, release_parts = ({n: v for n, v in p.items() if not n.startswith(LOCKED_CELL_PREFIX)} if p is not None
                                else None for p in (parts, release_parts))
    if release_parts is None:
        return Verdict(digest(parts), None)
    changed = sorted(name for name in set(parts) | set(release_parts) if parts.get(name) != release_parts.get(name))
    return Verdict(digest(parts), digest(release_parts), changed)


def release_record(parts: Mapping[str, str]) -> dict:
    return {"recipe": "sha256 over sorted '<part>\\0<sha256 of the part>\\n' lines", "fingerprint": digest(parts),
            "parts": dict(sorted(parts.items()))}


def verify_checkout(root: Path, notebook_path: str, graded: Path | None = None, *, notebook_found: bool = True) -> Verdict:
    """The checkout at ``root`` against the release record it carries (CI's view)."""
    parts = parts_of(read_tree(root, notebook_path, graded), notebook_path)
    try:
        record = json.loads((root / RELEASE_FILE).read_text(encoding="utf-8"))
        release_parts = {str(k): str(v) for k, v in record["parts"].items()}
        release_digest = str(record["fingerprint"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        if (root / "solutions").is_dir():  # the course repository itself: no release to compare with
            return compare(parts, None)
        # a student repository whose record is gone or unreadable: that is an edit too
        return Verdict(digest(parts), "missing", [RELEASE_FILE])
    verdict = compare(parts, release_parts, notebook_found=notebook_found)
    if digest(release_parts) != release_digest:  # the record itself was edited
        verdict.release = release_digest
        verdict.changed = verdict.changed or [RELEASE_FILE]
    return verdict
