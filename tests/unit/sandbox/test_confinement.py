"""autograder.sandbox.confinement's decisions, made without a worker (what confined workers
can and cannot do is tests/e2e/test_confinement.py)."""

from __future__ import annotations

import sysconfig
from pathlib import Path

from support import REPO

from autograder.sandbox import confinement


def test_grader_subprocesses_run_isolated():
    """Every Python the grader starts runs with -I (no PYTHONPATH, no user site, no current folder)."""
    sources = [p.read_text() for p in (REPO / "autograder").rglob("*.py")]
    starts = [line for text in sources for line in text.splitlines()
              if "sys.executable" in line and ("Popen(" in line or "run(" in line or "command = [" in line)]
    assert starts, "no subprocess found: the test looks in the wrong place"
    for line in starts:
        assert '"-I"' in line, line


def test_readable_paths_keep_the_grader_out():
    paths = confinement.readable_paths(str(REPO))
    assert str(REPO) not in paths and not any(p.startswith(str(REPO / "solutions")) for p in paths)
    assert str(REPO / "autograder" / "sandbox") in paths
    assert not any(p.startswith(str(REPO / "autograder" / "chapters")) for p in paths)
    # a pip-installed grader: the other packages in site-packages stay readable, not the grader's modules
    site = Path(sysconfig.get_paths()["purelib"])
    paths = confinement.readable_paths(str(site))
    assert str(site / "torch") in paths and str(site / "autograder" / "sandbox") in paths
    assert str(site) not in paths and str(site / "autograder") not in paths
