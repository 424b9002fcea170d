"""autograder.frontends.student_repo's pure parts: the address written into the setup cell and
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

    from autograder.frontends.student_repo import colab_link, with_install_source

    release = (REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb").read_bytes()
    before, after = json.loads(release)["cells"], json.loads(with_install_source(release, url))["cells"]
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and len(changed) == 1
    source = "".join(after[changed[0]]["source"])
    assert f"GRADER_SOURCE = {json.dumps(written)}" in source and "AUTOGRADER_INSTALL_SOURCE" in source
    assert "GRADER_SOURCE = \"\"" in "".join(before[changed[0]]["source"])
    link = colab_link(url, "assignments/ch03_attention/ch03_attention.ipynb")
    assert ("colab.research.google.com/github/org/ch03-template/blob/main/assignments/" in link) == ("github.com" in url)
