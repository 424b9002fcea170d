"""core/ is chapter-agnostic: no code of it names attention (issue 33).

The chapter's subject lives in the chapter (its examples, hint tables, mutation vocabulary);
core holds the mechanisms. The rule read here: no name and no string literal of core's code
holds a word of attention. Comments and docstrings may mention it (they explain the design with
the one chapter there is); a few names that are settings or files of the course, not its subject,
are listed in ALLOWED with why.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import autograder.core

CORE = Path(autograder.core.__file__).parent

# words of attention (case-insensitive, inside identifiers too: self.mask, ATTENTION_SIZES)
ATTENTION = re.compile(r"attention|mask|softmax|num_heads|head_dim|heads|quer(y|ies)|attn|triu|tril|qkv|"
                       r"out_proj|dropout|context_length|num_tokens|causal", re.I)

# (file, the token as written): why it may stay
ALLOWED = {
    # the one setting that relaxes a chapter's call policy: its name is documented to instructors
    # (docs/grading.md, AUTOGRADER_ALLOW_LIBRARY_ATTENTION) and read by the grading process
    ("engine.py", "allow_library_attention"): "a documented setting (Settings.allow_library_attention)",
    # compare.expect_close's hint for a NaN or inf output, worded for the one chapter there is
    ("compare.py", '"intermediate tensors (scores, masked scores, weights) to find the first step that gives "'):
        "a hint text not yet handed to the chapter",
    # run_property's hint for a result that changes between runs: dropout in any nn.Module
    ("strategies.py", '"hand-made dropout in forward, and no state kept between calls"'):
        "a hint about any module's forward, not attention's own",
}


# names, strings, and the text of an f-string (its own token from Python 3.12 on)
_CODE = {tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _docstrings(tree: ast.AST) -> set[int]:
    """The first lines of the module's, classes' and functions' docstrings."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                lines.add(first.lineno)
    return lines


def attention_words(source: str) -> list[tuple[int, str]]:
    """(line, token) of each name or string literal of ``source``'s code that names attention:
    comments and docstrings left out."""
    docstrings = _docstrings(ast.parse(source))
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING and token.start[0] in docstrings:
            continue
        if token.type in _CODE and ATTENTION.search(token.string):
            found.append((token.start[0], token.string))
    return found


def test_core_code_names_no_attention():
    named = [f"{path.name}:{line}: {text}" for path in sorted(CORE.glob("*.py"))
             for line, text in attention_words(path.read_text(encoding="utf-8"))
             if (path.name, text) not in ALLOWED]
    assert not named, "core/ is chapter-agnostic; move these to the chapter:\n" + "\n".join(named)


def test_every_allowance_is_still_needed():
    used = {(path.name, text) for path in CORE.glob("*.py") for _, text in attention_words(path.read_text("utf-8"))}
    assert set(ALLOWED) <= used, set(ALLOWED) - used


def test_the_rule_finds_code_and_strings_but_not_comments_or_docstrings():
    source = '''"""Module docstring about attention."""

def f(x, mask):  # a comment about softmax
    """A docstring naming num_heads."""
    hint = "print the queries"
    return x.masked_fill(mask, 0)
'''
    assert attention_words(source) == [(3, "mask"), (5, '"print the queries"'), (6, "masked_fill"), (6, "mask")]


def test_the_rule_fails_on_attention_code_moved_back_into_core():
    """What core held before issue 33 is caught: a Sizes with num_heads, a hint naming the mask,
    the droppable softmax."""
    before = '''
class Sizes:
    num_heads: int

HINT = ("masked_fill needs a boolean mask", "x")
DROPPABLE = {"softmax", "triu"}
'''
    assert [text for _, text in attention_words(before)] == [
        "num_heads", '"masked_fill needs a boolean mask"', '"softmax"', '"triu"']
