"""autograder.frontends.instructors.nbgrader's pure parts: which notebook is the submission, the late
penalty, the hidden examples' seeds (nbgrader itself runs in tests/e2e/test_nbgrader.py)."""

from __future__ import annotations

import pytest

# the instructors' install has nbgrader; make check-torch's venv (grading only) does not
pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
import nbformat  # noqa: E402
from support import SOLUTION  # noqa: E402

from autograder.chapters.ch03_attention import CHAPTER  # noqa: E402
from autograder.core import strategies  # noqa: E402
from autograder.frontends.instructors.nbgrader.plugins import LatePenalty  # noqa: E402
from autograder.frontends.instructors.nbgrader.stages import hidden_seeds, stage_cells, submitted_notebook  # noqa: E402

ASSIGNMENT = CHAPTER.id


def test_which_notebook_is_the_submission(tmp_path):
    assert submitted_notebook(tmp_path, ASSIGNMENT) == (None, f"no notebook in the submission folder (expected {ASSIGNMENT}.ipynb)")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "x-checkpoint.ipynb").write_text("{}")
    (tmp_path / "._Copy.ipynb").write_text("{}")
    (tmp_path / "Copy.ipynb").write_text("{}")
    assert submitted_notebook(tmp_path, ASSIGNMENT)[0] == tmp_path / "Copy.ipynb"
    (tmp_path / "b.ipynb").write_text("{}")
    chosen, note = submitted_notebook(tmp_path, ASSIGNMENT)
    assert chosen is None and "Copy.ipynb, b.ipynb" in note
    (tmp_path / f"{ASSIGNMENT}.ipynb").write_text("{}")
    assert submitted_notebook(tmp_path, ASSIGNMENT) == (tmp_path / f"{ASSIGNMENT}.ipynb",
                                                        f"graded {ASSIGNMENT}.ipynb; not graded: Copy.ipynb, b.ipynb")


def test_late_penalty_rule():
    rule = LatePenalty(per_day=0.1, cap=0.5)
    assert rule.late_submission_penalty("s", 100.0, 1) == 10
    assert rule.late_submission_penalty("s", 100.0, 36 * 3600) == 20
    assert rule.late_submission_penalty("s", 80.0, 30 * 86400) == 40  # capped at half


def _source_seeds() -> dict[int, list[int]]:
    nb = nbformat.read(SOLUTION, as_version=4)
    return {stage.number: hidden_seeds(nb.cells[i].source, stage) for i, stage in stage_cells(nb, CHAPTER).items()
            if not stage.bonus}


def test_a_hidden_seed_draws_other_examples():
    from autograder.chapters.ch03_attention.examples import attention_sizes
    from autograder.core.strategies import run_property

    def drawn(seed):
        seen = []
        with strategies.examples_seed(seed):
            run_property(seen.append, attention_sizes(heads=True), examples=10)
        return seen

    visible, hidden = drawn(None), drawn(_source_seeds()[6][0])
    assert visible == drawn(None), "the visible examples must be the same on every run"
    assert len(set(map(str, hidden)) - set(map(str, visible))) >= 5
