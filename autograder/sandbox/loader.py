"""Read a submission into code cells without running any of it: a notebook as plain JSON, a
``.py`` file as one cell; problems become a :class:`SubmissionError` a student can act on."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 20 * 1024 * 1024
SUFFIXES = (".ipynb", ".py")


class SubmissionError(Exception):
    """The submission cannot be graded at all (exit status 2)."""


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based position among the notebook's cells, Markdown included (the grader's key)
    source: str
    # How messages name it, as the student finds it in JupyterLab (which numbers no cells): the
    # execution count, the first line and the heading above it; a .py submission's file name.
    name: str


def _join(source) -> str:
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise SubmissionError("a cell's source is neither text nor a list of lines; the notebook is "
                          "damaged: open it in Jupyter and save it again, or restore it from git")


def read_cells(path: str | Path) -> list[Cell]:
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no such file")
    if path.is_dir():
        raise SubmissionError(f"{path} is a folder; give the notebook (.ipynb) or a .py file")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise SubmissionError(f"{path} is a {path.suffix or 'suffix-less'} file; the grader takes the "
                              "notebook (.ipynb) or a Python file (.py). Submit the .ipynb itself, "
                              "not an export (PDF, HTML) or an archive")
    raw = path.read_bytes()
    if len(raw) > MAX_BYTES:
        raise SubmissionError(f"{path} is {len(raw) // 2**20} MiB; a submission is at most 20 MiB "
                              "(clear the notebook's outputs: Kernel > Restart & Clear Output)")
    if not raw.strip():
        raise SubmissionError(f"{path} is empty (0 bytes of code): was it saved? In Jupyter: "
                              "File > Save, then grade again")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionError(f"{path} is not a text file but binary data (an archive, an image?); "
                              "is it the right file?") from None
    if suffix == ".py":
        return [Cell(1, text, path.name)]
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SubmissionError(
            f"{path} is not valid notebook JSON ({exc}); it may have been damaged by a merge or "
            "an editor. Open it in Jupyter to check, or restore it from git") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise SubmissionError(f"{path} is JSON but not a notebook (no list of cells)")
    code, heading = [], ""
    for position, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict):
            continue
        if cell.get("cell_type") == "markdown":
            found = re.findall(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", _join(cell.get("source", "")), re.MULTILINE)
            heading = found[-1] if found else heading
        elif cell.get("cell_type") == "code":
            code.append((position, _join(cell.get("source", "")), heading, cell.get("execution_count")))
    # cells that begin alike (three `torch.manual_seed(123)`) are told apart by their second line
    firsts = Counter(source.strip().split("\n")[0].strip() for _, source, _, _ in code)
    cells = [Cell(position, source, cell_label(source, heading, count, 1 + (firsts[source.strip().split("\n")[0].strip()] > 1)))
             for position, source, heading, count in code]
    if not cells:
        raise SubmissionError(f"{path} has no code cells, so there is nothing to grade: is it the "
                              "right notebook? (a code cell turned into Markdown shows as text)")
    return cells


def _shorten(text: str, width: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def cell_label(source: str, heading: str = "", execution_count=None, lines: int = 1) -> str:
    """A code cell named as the student sees it (``cell [12] "class CausalAttention(nn.Module):" under
    "Stage 4 (causal): ..."``), never by position: JupyterLab shows none, and Markdown cells would count."""
    first = " / ".join([line.strip() for line in source.splitlines() if line.strip()][:lines])
    label = "cell"
    if type(execution_count) is int and execution_count > 0:
        label += f" [{execution_count}]"
    label += f' "{_shorten(first, 24 + 24 * lines)}"' if first else " (empty)"
    if heading:
        label += f' under "{_shorten(heading)}"'
    return label


_MAGIC = re.compile(r"^(\s*)[%!]")


def strip_magics(source: str) -> str:
    """IPython-only lines (``%matplotlib inline``, ``!pip ...``) become ``pass``: the rest still runs."""
    return "\n".join(f"{match.group(1)}pass  # IPython-only line skipped" if (match := _MAGIC.match(line)) else line
                     for line in source.splitlines())
