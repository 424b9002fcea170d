"""What a student reads holds none of the instructor's commands and paths, the grader's jargon,
malformed code or a line without its number (issue 46): README.md's students' part,
docs/students.md, the students' README template, the release notebook and the grade command's
--help. The hints are held to the same list on the mistake catalog (tests/e2e/test_catalog.py)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from support import NOT_FOR_STUDENTS, RELEASE, REPO

from autograder.frontends import commands

TEMPLATE = REPO / "autograder" / "frontends" / "instructors" / "templates" / "student_README.md"


def _readme_students_part() -> str:
    text = (REPO / "README.md").read_text()
    return text[text.index("**Students**"):text.index("**Instructors**")]


def _notebook() -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(RELEASE.read_text())["cells"])


def _grade_help() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        commands.parse("grade", ["--help"])
    return out.getvalue()


TEXTS = {"README.md (students)": _readme_students_part, "docs/students.md": (REPO / "docs" / "students.md").read_text,
         "the students' README template": TEMPLATE.read_text, "the release notebook": _notebook,
         "grade --help": _grade_help}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_student_text_holds_no_instructor_words(name):
    found = sorted({m.group(0) for m in NOT_FOR_STUDENTS.finditer(TEXTS[name]())})
    assert not found, f"{name} holds {found}"


def test_the_list_finds_what_issue_46_quoted():
    quoted = ["run `make student-repo`", "`make bench` there", "make gradescope HIDDEN_EXAMPLES=1", "fingerprinted",
              "differs from the release's", "a modified grader", "PyTorch's 'meta' device", "the other stages were still graded",
              "prints the same report row", "self.mask[:num_tokens:num_tokens]", "(cell 3, line)", "see solutions/ch03.ipynb"]
    assert [q for q in quoted if not NOT_FOR_STUDENTS.search(q)] == []


@pytest.mark.parametrize("hints", [None, 1, 2])
def test_make_test_hints_sets_the_hint_level_and_the_courses_stays_the_default(hints):
    from autograder.frontends.students.cli import settings_from
    from autograder.sandbox.settings import Settings

    args = commands.parse("grade", ["x.ipynb", *(["--hints", str(hints)] if hints else [])])
    assert settings_from(args).hint_level == (hints or Settings.read().hint_level)


def test_a_syntax_error_is_told_in_its_own_words(monkeypatch):
    """Not its str(), which repeats the cell's long name: cut to fit a hint, it ended in "line)"."""
    import sys

    from autograder.sandbox.child import run_cells

    monkeypatch.setattr(sys, "stdout", sys.stdout)  # run_cells captures the prints: given back after the test
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    name = 'cell "def softmax_naive(x)" under "Stage 1 (softmax): Naive softmax"'
    [status] = run_cells([{"index": 8, "name": name, "source": "def softmax_naive(x)\n    return x\n"}], {}, lambda _: None)
    assert status["error"]["message"] == "expected ':'" and status["error"]["where"] == f"{name}, line 1"


def test_make_test_names_every_cell_of_the_notebook_apart():
    """A cell is named by its first line (and the heading above it); three cells beginning with
    `torch.manual_seed(123)` under one heading are told apart by their second line."""
    from autograder.sandbox.loader import read_cells

    names = [cell.name for cell in read_cells(RELEASE)]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
    assert 'cell "torch.manual_seed(123) / ca = CausalAttention(3, 2, 6, 0.0)" under "Stage 4' in " ".join(names)
