"""Issue 12: submissions that fake attention earn nothing, on every path.

tests/catalog/fakes/ holds three: every output zeros; the book's printed tensors looked up when
the input is the book's (zeros otherwise); and that lookup with every weight zeroed unless
``torch.initial_seed()`` is one of the book's seeds. Each has the contract's structure and
names. They are graded as the CLI grades (the sandboxed engine), as ``make ci-grade`` grades
(the CI front end's results.json), and as the instructor's notebook grades with its hidden
tests (each stage's test cell, visible and hidden examples).
"""

from __future__ import annotations

import json

import pytest
from support import REPO, TESTS

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.engine import grade_notebook_file
from autograder.frontends import commands
from autograder.frontends.students import notebook

FAKES = sorted((TESTS / "catalog" / "fakes").glob("*.py"))
GRADED = [s.number for s in CHAPTER.graded_stages]
# the checks of a module's structure (names, shapes, layers, buffers), which a fake with the
# contract's structure could claim; structure counts only when forward uses the weights, so
# every fake here earns 0 on them as well
STRUCTURE = {"3.3", "4.2", "5.3", "6.2", "6.3", "7.1", "7.2"}
STRUCTURE_POINTS = sum(c.points for c in CHAPTER.checks if c.id in STRUCTURE)


def _passed(report) -> set[str]:
    return {c.check.id for c in report.checks if c.score}


def _on_the_books_class(report) -> list:
    """The stages graded on the book's class in place of the fake's (a stage graded on its own
    code: stage 7's sizes with the book's MultiHeadAttention), each saying so in its row."""
    return [r for r in report.stages if any("graded with the book's" in note for note in r.notes)]


@pytest.mark.parametrize("path", FAKES, ids=lambda p: p.stem)
def test_a_fake_earns_nothing_on_the_cli_path(path):
    """Nothing for attention: points only where a stage's own code is right and the attention
    it builds on was the book's, which its row names."""
    report = grade_notebook_file(str(path), CHAPTER, GRADED, "cpu")
    assert not report.error
    borrowed = _on_the_books_class(report)
    assert {r.stage.number for r in borrowed} <= {5, 7}, "only the stages that build on an earlier class"
    allowed = STRUCTURE | {c.check.id for r in borrowed for c in r.checks}
    assert _passed(report) <= allowed, _passed(report) - allowed
    own = [c for c in report.checks if c.score and c.check.id not in {c.check.id for r in borrowed for c in r.checks}]
    assert own == [], [(c.check.id, c.message) for c in own]


def test_a_fake_earns_nothing_on_the_ci_path(tmp_path):
    for path in FAKES:
        results = tmp_path / f"{path.stem}.json"
        assert commands.main(["ci", str(path), "--results", str(results), "--device", "cpu"]) == 0
        data = json.loads(results.read_text())
        earned = {t["number"] for t in data["tests"] if t["score"]}
        # only the stages that build on an earlier class, graded with the book's (the CLI path's test above)
        assert {n.split(".")[0] for n in earned} <= {"5", "7"}, (path.name, earned)
        assert all("graded with the book's" in data["output"] for _ in earned), path.name


@pytest.mark.parametrize("path", [p for p in FAKES if p.stem.startswith("lookup")], ids=lambda p: p.stem)
def test_a_fake_earns_nothing_with_nbgrader_hidden_tests(path, capsys):
    """Each stage's test cell of the instructor's notebook: visible run, then the hidden block."""
    import nbformat

    from autograder.frontends.instructors.nbgrader.stages import hidden_seeds, stage_cells

    source = nbformat.read(CHAPTER.source_notebook(REPO), as_version=4)
    seeds = {stage.number: hidden_seeds(source.cells[i].source, stage)
             for i, stage in stage_cells(source, CHAPTER).items() if not stage.bonus}
    import torch

    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # the kernel runs the notebook's code
    torch.set_num_threads(1)  # small tensors; a second thread only spins on a shared core
    for number in GRADED:
        visible = notebook.grade_stage(CHAPTER.id, number, namespace)
        hidden = notebook.grade_stage(CHAPTER.id, number, namespace, hidden_seed=seeds[number][0])
        printed = capsys.readouterr().out
        if visible or hidden:  # only a stage built on an earlier class, graded with the book's, and saying so
            assert number in (5, 7) and "graded with the book's" in printed, printed


def test_the_zero_weights_fake_would_pass_on_its_own_weights():
    """The seed trick is real: with its own weights, "equals attention on its own weights"
    compares zeros with zeros (what the grader's weights now prevent)."""
    import torch

    from autograder.chapters.ch03_attention import reference as R

    namespace: dict = {}
    fake = next(p for p in FAKES if "unless" in p.stem)
    exec(compile(fake.read_text(), str(fake), "exec"), namespace)
    torch.manual_seed(5)
    module = namespace["CausalAttention"](3, 2, 6, 0.0)
    x = torch.rand(2, 4, 3)
    own = {k: v.detach() for k, v in module.state_dict().items()}
    assert torch.allclose(module(x).double(), R.attention(own, x))
