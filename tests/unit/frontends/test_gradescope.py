"""autograder.frontends.hosted.gradescope without a container: what its run script requires (the zip
and its runs, which notebook of an upload it grades among them, are tests/e2e/test_ci.py)."""

from __future__ import annotations

from support import REPO

from autograder.sandbox.settings import SOURCES

REQUIRE_CONFINEMENT = SOURCES["require_confinement"][1]


def test_the_gradescope_bundle_and_ci_workflow_require_confinement():
    from autograder.frontends.hosted.gradescope import RUN_AUTOGRADER

    assert f"{REQUIRE_CONFINEMENT}=\"${{{REQUIRE_CONFINEMENT}:-1}}\"" in RUN_AUTOGRADER
    workflow = (REPO / ".github" / "workflows" / "grade.yml").read_text()
    assert f'{REQUIRE_CONFINEMENT}: "1"' in workflow
