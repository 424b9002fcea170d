"""Which notebook of a folder is a student's submission: one finder, used by ``make
autograde``/``make export`` (nbgrader's submission folders), Gradescope (an upload) and ``make
grade-repos`` (a cloned repository).

The rules of :func:`find_notebook`, in order:

1. What counts: files named ``*.ipynb`` in ``folder`` (``below=False``) or anywhere under it
   (``below=True``). Never counted: macOS debris (names starting ``._``, anything under
   ``__MACOSX``), Jupyter checkpoints (``.ipynb_checkpoints``) and, below the folder, the
   folders of :data:`SKIPPED_FOLDERS` (``.git``, ``.venv``, ``build``, ``node_modules``).
   A link to a file counts as that file, unless links are refused (rule 5).
2. ``expected`` (a path relative to ``folder``, by default ``<assignment>.ipynb``) wins when
   it is a file (with ``links="refuse"``: when anything is there, to be refused by rule 5).
3. Else a notebook named ``<assignment>.ipynb``: the shallowest (ties: by path).
4. Else a notebook under another name (``ch03_attention (1).ipynb``, ``Copy_of_...``), graded
   as the assignment's: the only one, or with ``several="shallowest"`` the shallowest of them;
   with ``several="refuse"`` two or more are an error naming them (nobody guesses which one a
   student meant).
5. With ``links="refuse"``, the chosen path must not pass through a symbolic link (it could
   point anywhere on the grader's machine) and must be a regular file.

The answer (:class:`Found`) is the notebook, or None with the reason, and every notebook that
counted, so that each front end says in its own words what else it saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

# Never a submission, wherever they are.
IGNORED_PARTS = frozenset({".ipynb_checkpoints", "__MACOSX"})
# Below the folder, also skipped: a repository's own machinery, never the student's notebook.
SKIPPED_FOLDERS = frozenset({".git", ".venv", "build", "node_modules"})


@dataclass(frozen=True)
class Found:
    """What :func:`find_notebook` found: ``notebook`` (None: nothing to grade, ``problem`` and
    ``reason`` say why) and ``candidates``, every notebook that counted (sorted by path)."""

    notebook: Path | None
    candidates: list[Path] = field(default_factory=list)
    problem: Literal["", "none", "several", "link", "not a file"] = ""
    reason: str = ""

    def others(self) -> list[Path]:
        """The notebooks that counted but are not graded."""
        return [p for p in self.candidates if p != self.notebook]


def _counts(path: Path, folder: Path, below: bool, links: str) -> bool:
    parts = path.relative_to(folder).parts
    if path.name.startswith("._") or IGNORED_PARTS & set(parts):
        return False
    if below and SKIPPED_FOLDERS & set(parts[:-1]):
        return False
    return path.is_file() or (links == "refuse" and path.is_symlink())


def _depth_order(folder: Path):
    return lambda p: (len(p.relative_to(folder).parts), str(p))


def find_notebook(folder: str | Path, assignment: str, *, below: bool = False, expected: str | Path | None = None,
                  several: Literal["refuse", "shallowest"] = "refuse",
                  links: Literal["follow", "refuse"] = "follow") -> Found:
    """The submission in ``folder`` for ``assignment`` by the rules of this module's docstring."""
    folder = Path(folder)
    name = f"{assignment}.ipynb"
    walk = folder.rglob("*.ipynb") if below else folder.glob("*.ipynb")
    candidates = sorted(p for p in walk if _counts(p, folder, below, links))
    exact = folder / (expected if expected is not None else name)
    if exact.is_file() or (links == "refuse" and (exact.exists() or exact.is_symlink())):
        chosen = exact
    else:
        named = sorted((p for p in candidates if p.name == name), key=_depth_order(folder))
        renamed = sorted(candidates, key=_depth_order(folder))
        if named:
            chosen = named[0]
        elif not renamed:
            return Found(None, candidates, "none", f"no notebook in the submission folder (expected {name})")
        elif len(renamed) > 1 and several == "refuse":
            return Found(None, candidates, "several",
                         f"{len(renamed)} notebooks and none named {name} ({', '.join(p.name for p in renamed)}): "
                         f"keep one, or rename the one to grade to {name}")
        else:
            chosen = renamed[0]
    if links == "refuse":
        relative = chosen.relative_to(folder)
        walked = folder
        for part in relative.parts:
            walked = walked / part
            if walked.is_symlink():
                return Found(None, candidates, "link", f"{relative.as_posix()}: a symbolic link, not a notebook; not graded")
        if not chosen.is_file():
            return Found(None, candidates, "not a file", f"{relative.as_posix()} is not a regular file; not graded")
    return Found(chosen, candidates)


def find_in_repository(repo: str | Path, chapter) -> tuple[Path | None, str]:
    """The notebook to grade in a student's repository (``make grade-repos``, Classroom 50, a
    workflow's ``make ci-grade``) and a note for the report: the release's path, else the
    shallowest notebook of the assignment's name, else the shallowest notebook (a renamed copy
    such as ``Copy of ch03_attention (1).ipynb``). A link is never followed: it could point at
    anything on the grading machine (the solutions, say)."""
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
