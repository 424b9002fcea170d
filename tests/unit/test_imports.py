"""No import circles in autograder/ (issue 45): no module imports, through others, a module that
imports it, whether the imports sit at the top of a module or inside a function.

An import inside a function hides a circle from Python, not from a reader: the two modules can
no longer be read or changed one without the other. Imports under ``if TYPE_CHECKING:`` never
run (they name types for annotations) and are left out. pyproject.toml's acyclic_siblings
contract finds circles between sibling packages too, but not one through a package's own
``__init__``; this reads every module with :mod:`ast` and needs nothing but Python.
"""

from __future__ import annotations

import ast
from importlib.util import resolve_name
from pathlib import Path

import autograder

PACKAGE = Path(autograder.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None) if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def imports(source: str, module: str, modules: set[str], is_package: bool = False) -> dict[str, int]:
    """The ``modules`` that ``module``'s imports import, module-level and in functions alike, each
    with the line of its first import. ``from a import b`` imports the module ``a.b`` where there
    is one, else ``a`` (as import-linter reads it)."""
    package = module if is_package else module.rpartition(".")[0]
    found: dict[str, int] = {}

    def visit(node: ast.AST) -> None:
        if _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source_module = resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
            names = [f"{source_module}.{alias.name}" if f"{source_module}.{alias.name}" in modules else source_module
                     for alias in node.names]
        else:
            names = []
        for name in names:
            if name in modules and name != module:
                found.setdefault(name, node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def import_graph() -> dict[str, dict[str, int]]:
    """Each autograder module's imports of other autograder modules: {module: {imported: line}}."""
    paths = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    return {module: imports(path.read_text(encoding="utf-8"), module, set(paths), path.name == "__init__.py")
            for module, path in paths.items()}


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle (its modules in import order, the first again at the end) for each import that
    closes one, found depth first."""
    found, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append(path[path.index(module):] + [module])
        elif module not in done:
            for imported in sorted(graph[module]):
                visit(imported, path + [module])
            done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_no_import_circles():
    graph = import_graph()
    said = [" -> ".join(f"{module} (line {graph[module][after]})" for module, after in zip(circle, circle[1:]))
            + f" -> {circle[-1]}" for circle in circles(graph)]
    assert not said, "import circles; move the shared piece to the lower module:\n" + "\n".join(said)


def test_imports_inside_functions_count_and_type_checking_ones_do_not():
    checks = "autograder.chapters.ch03_attention.checks"
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from autograder.core.chapter import Chapter\n"
              "def grade():\n    from autograder.core import compare\n    from .spec import judged\n")
    modules = {"autograder.core", "autograder.core.chapter", "autograder.core.compare", f"{checks}.spec"}
    assert imports(source, f"{checks}.diagnosis", modules) == {"autograder.core.compare": 5, f"{checks}.spec": 6}
    assert circles({"a": {"b": 1}, "b": {"a": 2}, "c": {"a": 3}}) == [["a", "b", "a"]]
