"""autograder.frontends.instructors.student_repo's pure parts: the address written into the setup cell and
the Colab link (building the students' repository is tests/e2e/test_student_repo.py)."""

from __future__ import annotations

import pytest
from support import REPO


@pytest.mark.parametrize("url, written", [
    ("https://github.com/org/ch03-template", "git+https://github.com/org/ch03-template"),
    ("git+https://gitlab.example/course/ch03.git", "git+https://gitlab.example/course/ch03.git"),
    ("/srv/ch03 (copy)", "/srv/ch03 (copy)"),
])
def test_student_repo_writes_its_address_into_the_setup_cell(url, written):
    import json

    from autograder.frontends.instructors.student_repo import colab_link, with_install_source

    release = (REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb").read_bytes()
    before, after = json.loads(release)["cells"], json.loads(with_install_source(release, url))["cells"]
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and len(changed) == 1
    source = "".join(after[changed[0]]["source"])
    assert f"GRADER_SOURCE = {json.dumps(written)}" in source and "AUTOGRADER_INSTALL_SOURCE" in source
    assert "GRADER_SOURCE = \"\"" in "".join(before[changed[0]]["source"])
    link = colab_link(url, "assignments/ch03_attention/ch03_attention.ipynb")
    assert ("colab.research.google.com/github/org/ch03-template/blob/main/assignments/" in link) == ("github.com" in url)


PRIVATE = "https://github.com/org/ch03-template-ada"  # a Classroom student's copy: private
PUBLIC = "https://github.com/org/ch03-grader"  # the public, answer-free install source


def _setup_and_readme(url, grader_url):
    import json

    from autograder.chapters import load
    from autograder.frontends.instructors.student_repo import release_files

    files = release_files(load("ch03_attention"), REPO, url=url, grader_url=grader_url)
    cells = json.loads(files["assignments/ch03_attention/ch03_attention.ipynb"])["cells"]
    setup = next("".join(c["source"]) for c in cells if "GRADER_SOURCE =" in "".join(c["source"]))
    return setup, files["README.md"].decode()


def test_the_setup_cell_installs_from_grader_url_and_the_badge_opens_url():
    setup, readme = _setup_and_readme(PRIVATE, PUBLIC)
    assert f'GRADER_SOURCE = "git+{PUBLIC}"' in setup  # the pip install line's source
    assert PRIVATE not in setup and "ch03-template-ada" not in setup  # the private address only in the README
    assert "colab.research.google.com/github/org/ch03-template-ada/blob/main/" in readme
    assert PUBLIC not in readme
    assert "@" not in setup.split("GRADER_SOURCE =")[1].splitlines()[0]  # no https://<token>@


def test_without_grader_url_the_setup_cell_installs_from_url():
    setup, _ = _setup_and_readme(PUBLIC, None)
    assert f'GRADER_SOURCE = "git+{PUBLIC}"' in setup


@pytest.mark.parametrize("grader_url, written", [
    ("https://github.com/org/ch03-grader/releases/download/v1/autograder-0.1-py3-none-any.whl",
     "https://github.com/org/ch03-grader/releases/download/v1/autograder-0.1-py3-none-any.whl"),
    ("https://example.org/ch03-grader-0.1.tar.gz", "https://example.org/ch03-grader-0.1.tar.gz"),
])
def test_a_wheel_or_sdist_url_is_installed_as_given(grader_url, written):
    setup, _ = _setup_and_readme(None, grader_url)
    assert f'GRADER_SOURCE = "{written}"' in setup


def test_an_install_source_with_a_token_is_refused():
    from autograder.frontends.commands import Refused
    from autograder.frontends.instructors.student_repo import with_install_source

    release = (REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb").read_bytes()
    with pytest.raises(Refused, match="credentials"):
        with_install_source(release, "https://ghp_secret@github.com/org/ch03-template")


def test_the_students_makefile_points_at_nothing_their_repository_lacks():
    """students.mk is the students' repository's Makefile as it is: it names no file of the course
    repository (docs/, tests/, solutions/) and stands alone (no include)."""
    import re

    from support import STUDENTS_MAKEFILE

    text = STUDENTS_MAKEFILE.read_text(encoding="utf-8")
    assert not re.findall(r"\b(?:docs|tests|solutions)/\S+", text)
    assert not re.search(r"^-?include ", text, re.M)
    assert re.search(r"^test: ", text, re.M) and re.search(r"^lab: ", text, re.M)
