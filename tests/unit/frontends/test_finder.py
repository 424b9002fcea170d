"""The one notebook finder (autograder.frontends.finder) and the three front ends' use of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.frontends import finder
from autograder.frontends.instructors.nbgrader.stages import submitted_notebook

A = "ch03_attention"


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


def test_exact_name_wins_and_others_are_listed(tmp_path):
    exact = touch(tmp_path / f"{A}.ipynb")
    touch(tmp_path / "scratch.ipynb")
    found = finder.find_notebook(tmp_path, A)
    assert found.notebook == exact and found.problem == ""
    assert found.candidates == [exact, tmp_path / "scratch.ipynb"]
    assert submitted_notebook(tmp_path, A) == (exact, f"graded {A}.ipynb; not graded: scratch.ipynb")


def test_a_single_renamed_notebook_is_graded(tmp_path):
    renamed = touch(tmp_path / f"{A} (1).ipynb")
    assert finder.find_notebook(tmp_path, A).notebook == renamed
    assert submitted_notebook(tmp_path, A) == (renamed, f"renamed notebook: graded {A} (1).ipynb as {A}.ipynb")


def test_two_candidates_are_refused_or_the_shallowest_taken(tmp_path):
    touch(tmp_path / "final.ipynb")
    touch(tmp_path / "draft.ipynb")
    refused = finder.find_notebook(tmp_path, A)
    assert refused.notebook is None and refused.problem == "several"
    assert refused.reason.startswith(f"2 notebooks and none named {A}.ipynb (draft.ipynb, final.ipynb)")
    assert finder.find_notebook(tmp_path, A, several="shallowest").notebook == tmp_path / "draft.ipynb"


def test_checkpoints_and_macos_debris_never_count(tmp_path):
    touch(tmp_path / ".ipynb_checkpoints" / f"{A}-checkpoint.ipynb")
    touch(tmp_path / "__MACOSX" / f"{A}.ipynb")
    touch(tmp_path / f"._{A}.ipynb")
    only = touch(tmp_path / "Copy.ipynb")
    assert finder.find_notebook(tmp_path, A, below=True).candidates == [only]
    assert finder.find_notebook(tmp_path, A, below=True).notebook == only


def test_no_notebook_gives_a_reason(tmp_path):
    touch(tmp_path / "answer.py")
    found = finder.find_notebook(tmp_path, A)
    assert found.notebook is None and found.problem == "none"
    assert submitted_notebook(tmp_path, A) == (None, f"no notebook in the submission folder (expected {A}.ipynb)")


def test_below_the_exact_name_wins_over_a_shallower_renamed_one(tmp_path):
    # Gradescope's rule for an upload (below, the shallowest); its runs: tests/e2e/test_ci.py
    assert finder.find_notebook(tmp_path, A, below=True, several="shallowest").notebook is None
    touch(tmp_path / "b" / "notes.ipynb")
    touch(tmp_path / "a.ipynb")
    assert finder.find_notebook(tmp_path, A, below=True, several="shallowest").notebook == tmp_path / "a.ipynb"
    deep = touch(tmp_path / "work" / f"{A}.ipynb")
    assert finder.find_notebook(tmp_path, A, below=True, several="shallowest").notebook == deep
    assert finder.find_notebook(tmp_path, A, below=False).notebook == tmp_path / "a.ipynb"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_links_are_refused_where_asked(tmp_path):
    target = touch(tmp_path / "elsewhere" / "secret.ipynb")
    repo = tmp_path / "repo"
    (repo / "assignments" / A).mkdir(parents=True)
    (repo / "assignments" / A / f"{A}.ipynb").symlink_to(target)
    expected = Path("assignments", A, f"{A}.ipynb")
    refused = finder.find_notebook(repo, A, below=True, expected=expected, links="refuse")
    assert refused.notebook is None and refused.problem == "link"
    followed = finder.find_notebook(repo, A, below=True, expected=expected)
    assert followed.notebook == repo / expected


def test_overlooked_names_a_newer_notebook_or_any_beside_a_zero(tmp_path):
    graded = tmp_path / "ch03_attention.ipynb"
    graded.write_text("{}")
    copy = tmp_path / "Copy of ch03_attention.ipynb"
    copy.write_text("{}")
    (tmp_path / "._Copy of ch03_attention.ipynb").write_text("{}")  # macOS debris never counts
    os.utime(copy, (1_000, 1_000))  # older than the graded one
    assert finder.overlooked(graded, scored_nothing=False) is None
    note = finder.overlooked(graded, scored_nothing=True)
    assert '"Copy of ch03_attention.ipynb" is beside it:' in note and "._" not in note
    assert "rename that one to ch03_attention.ipynb" in note
    os.utime(copy, (graded.stat().st_mtime + 60,) * 2)
    assert "beside it and newer" in finder.overlooked(graded, scored_nothing=False)
    assert finder.overlooked(tmp_path / "missing.ipynb", scored_nothing=True) is None
