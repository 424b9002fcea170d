"""autograder.frontends.hosted.gradescope without a container: which notebook it grades and what its
run script requires (the zip and its runs are tests/e2e/test_ci.py)."""

from __future__ import annotations

from support import REPO

from autograder.frontends.hosted import gradescope
from autograder.sandbox.settings import SOURCES

REQUIRE_CONFINEMENT = SOURCES["require_confinement"][1]


def test_find_notebook_prefers_the_assignment_notebook(tmp_path):
    assert gradescope.find_notebook(tmp_path) == (None, [])
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "notes.ipynb").write_text("{}")
    (tmp_path / "a.ipynb").write_text("{}")
    assert gradescope.find_notebook(tmp_path)[0] == tmp_path / "a.ipynb", "else the shallowest"
    (tmp_path / "b" / "ch03_attention.ipynb").write_text("{}")
    assert gradescope.find_notebook(tmp_path)[0] == tmp_path / "b" / "ch03_attention.ipynb"


def test_the_gradescope_bundle_and_ci_workflow_require_confinement():
    from autograder.frontends.hosted.gradescope import RUN_AUTOGRADER

    assert f"{REQUIRE_CONFINEMENT}=\"${{{REQUIRE_CONFINEMENT}:-1}}\"" in RUN_AUTOGRADER
    workflow = (REPO / ".github" / "workflows" / "grade.yml").read_text()
    assert f'{REQUIRE_CONFINEMENT}: "1"' in workflow
