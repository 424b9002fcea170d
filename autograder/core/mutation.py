"""One-operation changes of Python code (mutation operators over :mod:`ast`) and the variants of a
chapter's step program they give: an output equal to one names a mistake nobody catalogued."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

_BINOP_SWAPS = {ast.Div: [ast.Mult, ast.FloorDiv], ast.Mult: [ast.Div, ast.Add], ast.Add: [ast.Sub, ast.Mult],
                ast.Sub: [ast.Add], ast.MatMult: [ast.Mult], ast.FloorDiv: [ast.Div, ast.Mod],
                ast.Pow: [ast.Mult], ast.Mod: [ast.FloorDiv]}
_CMP_SWAPS = {ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.Lt: [ast.LtE, ast.Gt], ast.LtE: [ast.Lt],
              ast.Gt: [ast.GtE, ast.Lt], ast.GtE: [ast.Gt]}

@dataclass(frozen=True)
class Vocabulary:
    """What the operators vary beyond the syntax: hashable, so variants stay cached per vocabulary."""

    # calls whose result can be replaced by their receiver or their first argument (the call dropped)
    droppable: frozenset[str] = frozenset({"transpose", "contiguous", "exp", "sqrt", "bool", "T", "mT", "permute",
                                           "float", "view", "reshape"})
    # keyword arguments whose removal is a change (the callee's default taken instead)
    keywords: tuple[str, ...] = ("keepdim",)
    # attribute names exchanged for one another: each for every other of its group
    attributes: tuple[tuple[str, ...], ...] = ()
    # string constants exchanged for one another: each for every other of its group; other strings are never changed
    strings: tuple[tuple[str, ...], ...] = ()

    @staticmethod
    def counterparts(groups: tuple[tuple[str, ...], ...], value) -> list[str]:
        return [other for group in groups if value in group for other in group if other != value]


GENERIC = Vocabulary()

_AXIS_KEYWORDS = ("dim", "axis")
_MODULES = ("torch", "F", "math", "self")


def call_name(call: ast.AST) -> str:
    """The name a call is made by: ``softmax`` for ``torch.softmax(...)`` and ``x.softmax(...)``."""
    func = call.func if isinstance(call, ast.Call) else call
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def one_operation_changes(node: ast.AST, vocabulary: Vocabulary = GENERIC) -> Iterator[tuple[str, ast.AST]]:
    """(operator, replacement node) for each one-operation change of ``node`` itself."""
    if isinstance(node, ast.BinOp):
        for op in _BINOP_SWAPS.get(type(node.op), []):
            yield f"{type(node.op).__name__}->{op.__name__}", ast.BinOp(node.left, op(), node.right)
        yield "drop right operand", node.left  # a / sqrt(d) -> a, x @ W -> x, ...
        if type(node.op) in (ast.Div, ast.Sub, ast.MatMult, ast.Pow, ast.FloorDiv):
            yield "swap operands", ast.BinOp(node.right, node.op, node.left)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        for op in _CMP_SWAPS.get(type(node.ops[0]), []):
            yield f"{type(node.ops[0]).__name__}->{op.__name__}", ast.Compare(node.left, [op()], node.comparators)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield "drop minus sign", node.operand
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        for value in (node.value + 1, node.value - 1):
            yield f"int {node.value}->{value}", ast.Constant(value)
    elif isinstance(node, ast.Constant) and type(node.value) is float:
        yield f"float {node.value}->{node.value + 1}", ast.Constant(node.value + 1.0)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        for other in vocabulary.counterparts(vocabulary.strings, node.value):
            yield f"'{node.value}'->'{other}'", ast.Constant(other)
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield f"{node.value}->{not node.value}", ast.Constant(not node.value)
    elif isinstance(node, ast.Attribute) and node.attr in ("inf",):
        yield "inf->0", ast.Constant(0.0)
    elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        yield f"drop .{node.attr}", node.value
    elif isinstance(node, ast.Attribute) and vocabulary.counterparts(vocabulary.attributes, node.attr):
        for other in vocabulary.counterparts(vocabulary.attributes, node.attr):
            yield f"{node.attr}->{other}", ast.Attribute(node.value, other, node.ctx)
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Slice, ast.Tuple)) and \
            any(isinstance(s, ast.Slice) for s in ([node.slice] if isinstance(node.slice, ast.Slice) else node.slice.elts)):
        yield "drop slice", node.value
    elif isinstance(node, ast.Call):
        yield from _call_changes(node, vocabulary)


def _call_changes(node: ast.Call, vocabulary: Vocabulary) -> Iterator[tuple[str, ast.AST]]:
    name = call_name(node)
    if name in vocabulary.droppable:
        if isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name) and
                                                         node.func.value.id in _MODULES):
            yield f"drop .{name}()", node.func.value
        elif node.args:
            yield f"drop {name}()", node.args[0]
    if len(node.args) == 2 and not isinstance(node.args[0], ast.Starred):
        yield "swap arguments", ast.Call(node.func, [node.args[1], node.args[0]], node.keywords)
    for i, kw in enumerate(node.keywords):
        if kw.arg in _AXIS_KEYWORDS:
            for value in (0, -2, 1):
                if ast.unparse(kw.value) != str(value):
                    keywords = [*node.keywords[:i], ast.keyword(kw.arg, ast.Constant(value)), *node.keywords[i + 1:]]
                    yield f"{kw.arg}={ast.unparse(kw.value)}->{value}", ast.Call(node.func, node.args, keywords)
        elif kw.arg in vocabulary.keywords:
            yield f"drop {kw.arg}=", ast.Call(node.func, node.args, [k for k in node.keywords if k is not kw])


def parents_of(tree: ast.AST) -> dict:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def mutable(node: ast.AST, parents: dict, vocabulary: Vocabulary = GENERIC) -> bool:
    """Whether the operators apply to ``node`` (not a statement, argument, keyword, callee or unvaried string)."""
    if isinstance(node, (ast.stmt, ast.arg, ast.arguments, ast.keyword)):
        return False
    if isinstance(parents.get(node), ast.Call) and parents[node].func is node:
        return False
    return not (isinstance(node, ast.Constant) and isinstance(node.value, str) and
                not vocabulary.counterparts(vocabulary.strings, node.value))


def replaced(tree: ast.AST, parents: dict, node: ast.AST, replacement: ast.AST) -> str | None:
    """The source of ``tree`` with ``node`` replaced (``tree`` itself is left as it was)."""
    holder = parents.get(node)
    for name, value in ast.iter_fields(holder) if holder is not None else ():
        if value is node or isinstance(value, list) and any(item is node for item in value):
            setattr(holder, name, replacement if value is node else [replacement if i is node else i for i in value])
            try:
                return ast.unparse(tree)
            finally:
                setattr(holder, name, value)
    return None


# -- the variants of a reference program ---------------------------------------------------------

@dataclass(frozen=True)
class StepVariant:
    """A reference program with one operation of one step changed."""

    step: str  # the name the changed statement assigns ("return" for the return statement)
    operator: str  # what was changed, as an id ("div_floordiv", "drop_transpose", "dim_1_0")
    before: str  # that statement as the reference writes it
    after: str  # and changed
    function: Callable


def _step_of(statement: ast.stmt) -> str:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return "return" if isinstance(statement, ast.Return) else ""


def swap_steps(definition: ast.FunctionDef, first: str, second: str) -> None:
    """``first = f(x); second = g(first)`` written the other way round, ``second = g(x); first = f(second)``
    (``x`` the step before), and the steps after reading ``first``: the same computation."""
    body = definition.body
    i = next(i for i, statement in enumerate(body) if _step_of(statement) == first)
    x = _step_of(body[i - 1])
    for statements, old, new in (([body[i + 1]], first, x), ([body[i]], x, second), (body[i + 2:], second, first)):
        for node in (n for statement in statements for n in ast.walk(statement.value)):
            if isinstance(node, ast.Name) and node.id == old:
                node.id = new
    body[i], body[i + 1] = body[i + 1], body[i]


@cache
def step_variants(function: Callable, alternatives: tuple[str, ...] = (), vocabulary: Vocabulary = GENERIC,
                  swapped: tuple[str, str] | None = None) -> tuple[StepVariant, ...]:
    """Every one-operation variant of ``function`` (one named step per statement), compiled in
    its module, deduplicated; ``alternatives``: other ways to write a step, varied in their turn;
    ``swapped``: two steps written the other way round first (:func:`swap_steps`)."""
    source = textwrap.dedent(inspect.getsource(function))
    tree = ast.parse(source)
    definition = tree.body[0]
    definition.decorator_list = []
    if swapped:
        swap_steps(definition, *swapped)
    seen = {ast.unparse(tree)}
    found = []
    written = [(i, statement) for i, statement in enumerate(definition.body)]
    for alternative in alternatives:
        statement = ast.parse(alternative).body[0]
        index = next((i for i, s in enumerate(definition.body) if _step_of(s) == _step_of(statement)), None)
        if index is None:
            raise ValueError(f"no step {_step_of(statement)!r} in {function.__name__} for {alternative!r}")
        written.append((index, statement))
    for index, statement in written:
        step = _step_of(statement)
        if not step:
            continue
        original, definition.body[index] = definition.body[index], statement
        parents = parents_of(tree)
        try:
            for node in ast.walk(statement):
                if not mutable(node, parents, vocabulary):
                    continue
                for operator, replacement in one_operation_changes(node, vocabulary):
                    text = replaced(tree, parents, node, replacement)
                    if text is None or text in seen:
                        continue
                    seen.add(text)
                    namespace = dict(function.__globals__)
                    exec(compile(text, f"<variant of {function.__name__}>", "exec"), namespace)
                    found.append(StepVariant(step, re.sub(r"[^a-z0-9]+", "_", operator.lower()).strip("_"), ast.unparse(statement),
                                             replaced(statement, parents, node, replacement), namespace[definition.name]))
        finally:
            definition.body[index] = original
    return tuple(found)
