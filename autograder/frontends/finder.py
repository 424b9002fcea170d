"""Which notebook of a folder is a student's submission, by one set of rules for every route: the
expected name, else the shallowest of that name, else the one renamed notebook (two are refused)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

IGNORED_PARTS = frozenset({".ipynb_checkpoints", "__MACOSX"})
SKIPPED_FOLDERS = frozenset({".git", ".venv", "build", "node_modules"})


@dataclass(frozen=True)
class Found:
    """``notebook`` (None: ``problem`` and ``reason`` say why) and every notebook that counted."""

    notebook: Path | None
    candidates: list[Path] = field(default_factory=list)
    problem: Literal["", "none", "several", "link", "not a file"] = ""
    reason: str = ""


def _counts(path: Path, folder: Path, links: str) -> bool:
    parts = path.relative_to(folder).parts
    if path.name.startswith("._") or IGNORED_PARTS & set(parts) or SKIPPED_FOLDERS & set(parts[:-1]):
        return False
    return path.is_file() or (links == "refuse" and path.is_symlink())


def find_notebook(folder: str | Path, assignment: str, *, below: bool = False, expected: str | Path | None = None,
                  several: Literal["refuse", "shallowest"] = "refuse",
                  links: Literal["follow", "refuse"] = "follow") -> Found:
    folder = Path(folder)
    name = f"{assignment}.ipynb"
    candidates = sorted(p for p in (folder.rglob("*.ipynb") if below else folder.glob("*.ipynb")) if _counts(p, folder, links))
    exact = folder / (expected or name)
    shallowest = sorted(candidates, key=lambda p: (len(p.relative_to(folder).parts), str(p)))
    named = [p for p in shallowest if p.name == name]
    if exact.is_file() or (links == "refuse" and (exact.exists() or exact.is_symlink())):
        chosen = exact
    elif named:
        chosen = named[0]
    elif not candidates:
        return Found(None, candidates, "none", f"no notebook in the submission folder (expected {name})")
    elif len(candidates) > 1 and several == "refuse":
        return Found(None, candidates, "several",
                     f"{len(candidates)} notebooks and none named {name} ({', '.join(p.name for p in shallowest)}): "
                     f"keep one, or rename the one to grade to {name}")
    else:
        chosen = shallowest[0]
    if links == "refuse":
        relative = chosen.relative_to(folder)
        if any((folder / Path(*relative.parts[:n])).is_symlink() for n in range(1, len(relative.parts) + 1)):
            return Found(None, candidates, "link", f"{relative.as_posix()}: a symbolic link, not a notebook; not graded")
        if not chosen.is_file():
            return Found(None, candidates, "not a file", f"{relative.as_posix()} is not a regular file; not graded")
    return Found(chosen, candidates)


def find_in_repository(repo: str | Path, chapter) -> tuple[Path | None, str]:
    """The notebook to grade in a student's repository, and a note; links never followed."""
    repo = Path(repo)
    expected = chapter.release_notebook(repo).relative_to(repo)
    found = find_notebook(repo, chapter.id, below=True, expected=expected, several="shallowest", links="refuse")
    if found.problem == "none":
        return None, f"no notebook (.ipynb) in the repository; expected {expected.as_posix()}"
    if found.notebook is None:
        return None, found.reason
    relative = found.notebook.relative_to(repo)
    note = "" if relative == expected else f"graded {relative.as_posix()} (not at {expected.as_posix()})"
    return found.notebook, note


def overlooked(graded: str | Path, scored_nothing: bool) -> str | None:
    """Names the notebooks beside the graded one a student may have meant: newer ones, or any if it scored nothing."""
    graded = Path(graded)
    if graded.suffix != ".ipynb" or not graded.is_file():
        return None
    when = graded.stat().st_mtime
    others = [p for p in find_notebook(graded.parent, graded.stem).candidates
              if p != graded and (scored_nothing or p.stat().st_mtime > when)]
    if not others:
        return None
    names = ", ".join(f'"{p.name}"' for p in others)
    return (f"only {graded.name} is graded, but {names} {'is' if len(others) == 1 else 'are'} beside it"
            f"{'' if scored_nothing else ' and newer'}: to hand in another notebook, move {graded.name} "
            f"out of the folder and rename that one to {graded.name}")
