"""Answers that must never leave the instructor's repository, and where a tree shows them.

Read as an attacker would: every file, every notebook cell, every function body, against every
answer this repository holds (the solution cells, the hidden tests and their seeds, the
catalog's correct submissions). Used by the students' repository's and Classroom 50's tests.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

from support import RELEASE, REPO, SOLUTION

CORRECT = sorted((REPO / "tests" / "catalog" / "correct").glob("*.py"))


def files_of(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and ".git" not in p.relative_to(tree).parts)


def code_cells(notebook: Path | bytes) -> list[str]:
    data = json.loads(notebook.read_bytes() if isinstance(notebook, Path) else notebook)
    return ["".join(c["source"]) for c in data["cells"] if c["cell_type"] == "code"]


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def definitions(source: str) -> set[str]:
    """Every function's body, docstring dropped, as an AST dump: the same code however it is
    formatted or commented. Lines starting with % or ! (IPython) are skipped."""
    source = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        module = ast.parse(source)
    except SyntaxError:
        return set()
    return {ast.dump(ast.Module(body=_without_docstring(node.body), type_ignores=[]))
            for node in ast.walk(module) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def code_lines(source: str) -> list[str]:
    """The lines of code in order, comments and all whitespace removed (a statement spread
    over several lines gives one entry per line)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [flat for line in source.splitlines() if (flat := re.sub(r"\s+", "", line))]
    by_line: dict[int, list[str]] = {}
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
            by_line.setdefault(tok.start[0], []).append(tok.string)
    return [re.sub(r"\s+", "", "".join(parts)) for _, parts in sorted(by_line.items())]


def flattened(source: str) -> str:
    return "\n".join(code_lines(source))


def solution_regions(source: str) -> list[str]:
    return re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", source, re.S)


def answers() -> dict[str, set[str]]:
    """What must never reach a student, from the instructor's notebook and the catalog:

    - each solution region (between BEGIN/END SOLUTION), normalised (no comments, no
      whitespace), and every two consecutive lines of it or of a catalog file that the release
      does not already show (its docstrings state the interface, the grader's hints quote
      single lines on purpose);
    - every function body, docstring dropped and compared as an AST (any formatting);
    - the hidden tests' marker and seeds."""
    release_cells = ["".join(c["source"]) for c in json.loads(RELEASE.read_text())["cells"]]
    given_text = re.sub(r"\s+", "", "".join(release_cells))
    given_defs = set().union(*map(definitions, code_cells(RELEASE)))
    solution_cells = code_cells(SOLUTION)
    sources = [region for cell in solution_cells for region in solution_regions(cell)] + [p.read_text() for p in CORRECT]
    regions = {flattened(r) for cell in solution_cells for r in solution_regions(cell)}
    windows = set()
    for source in sources:
        lines = code_lines(source)
        for first, second in zip(lines, lines[1:]):
            if len(first + second) >= 40 and first + second not in given_text:
                windows.add(f"{first}\n{second}")
    bodies = set().union(*map(definitions, solution_cells + sources)) - given_defs
    seeds = set(re.findall(r"hidden_seed\s*=\s*(\d+)", SOLUTION.read_text()))
    assert bodies and windows and seeds and len(regions) > 10, "no answers found: the leak test would prove nothing"
    return {"bodies": bodies, "code": {r for r in regions if len(r) >= 30} | windows, "seeds": seeds,
            "markers": {"BEGIN HIDDEN TESTS", "BEGIN SOLUTION"}}


def leaks(tree: Path, found: dict[str, set[str]]) -> list[str]:
    problems = []
    for path in files_of(tree):
        relative = path.relative_to(tree).as_posix()
        text = path.read_bytes().decode("utf-8", "replace")
        sources = code_cells(path.read_bytes()) if path.suffix == ".ipynb" else [text]
        if path.suffix == ".md":  # code in a README's fences counts as code
            sources += re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
        bodies = set().union(*map(definitions, sources))
        problems += [f"{relative}: a solution's function body" for _ in bodies & found["bodies"]]
        flat = "\n".join(map(flattened, sources))
        problems += [f"{relative}: solution code {code!r}" for code in found["code"] if code in flat]
        problems += [f"{relative}: hidden-test seed {seed}" for seed in found["seeds"]
                     if re.search(rf"(?<!\d){seed}(?!\d)", text)]
        problems += [f"{relative}: {marker!r}" for marker in found["markers"] if marker in text]
    return problems
