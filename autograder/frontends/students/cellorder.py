"""Names a notebook's functions use before the cell that defines them, read from the cells' text:
make test finds them, the test cell that runs earlier fails with NameError."""

from __future__ import annotations

import builtins
import symtable

from autograder.sandbox.loader import strip_magics

_BUILTINS = set(dir(builtins))


def _table(source: str, index: int):
    try:
        return symtable.symtable(strip_magics(source), f"cell {index}", "exec")
    except (SyntaxError, ValueError):
        return None  # a cell that does not parse is reported as a cell error already


def _uses(table, owner: str):
    for child in table.get_children():
        name = child.get_name() if owner == "" else owner
        for symbol in child.get_symbols():
            if symbol.is_referenced() and symbol.is_global() and not symbol.is_declared_global():
                yield name, symbol.get_name()
        yield from _uses(child, name)


def late_names(cells) -> list[str]:
    """A warning for each global a function or class reads that a later cell first defines."""
    tables = [(c.index, c.source, _table(c.source, c.index)) for c in cells]
    names = {c.index: c.name for c in cells}
    first: dict[str, int] = {}
    for index, _, table in tables:
        for symbol in table.get_symbols() if table is not None else ():
            if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace():
                first.setdefault(symbol.get_name(), index)
    tests = [index for index, source, _ in tables if "grade_stage(" in source]
    found, seen = [], set()
    for index, _, table in tables:
        if table is None:
            continue
        for user, name in _uses(table, ""):
            defined_in = first.get(name)
            if name in _BUILTINS or defined_in is None or defined_in <= index or (user, name) in seen:
                continue
            seen.add((user, name))
            text = f"{names[index]}: `{user}` uses `{name}`, which is first defined further down, in {names[defined_in]}"
            test = next((t for t in tests if index < t < defined_in), None)
            if test is not None:
                text += (f"; the notebook's test {names[test]} runs before that and fails with NameError, "
                         "while make test, which runs the whole notebook first, finds it")
            found.append(text + f". Move `{name}` above the cell that uses it.")
    return found
