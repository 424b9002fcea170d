"""Shared fixtures. Every test runs from the repository root with the installed package; the
shared paths and helpers they build on are tests/support.py's."""

from __future__ import annotations

import atexit
import gc
import shutil
from pathlib import Path

import pytest

# Re-exported: older tests (and tests written on other branches) import these from conftest.
from support import RELEASE, REPO, SOLUTION, CliRun, link_venv, run_grader  # noqa: F401


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collection imports torch, nbgrader and hypothesis: some 400,000 objects the cyclic garbage
    collector would walk again in each of its full passes (over half a second each on a 2-core
    machine, a dozen of them while collecting, more during the run and at its end). It is off
    while collecting; what collection made is then moved out of its reach (gc.freeze: the
    modules, the test functions, the parametrized cases live for the whole run anyway), and
    it is back on for the tests, whose objects it collects as before."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.enable()


# Python's exit ends with a full garbage collection over every object left (torch's, nbgrader's,
# the tests'): 0.7 s of each pytest process's end. Exit handlers run last registered first, so
# this one (registered as pytest starts) runs after pytest's end and the handlers of what the
# tests imported and started; as python -m autograder does (autograder/__main__.py).
atexit.register(gc.freeze)

# make check's schedule (Makefile: --dist loadscope --no-loadscope-reorder): pytest-xdist hands
# each worker a whole test module at a time, in collection order. The longest modules go first
# and the unit layer's (hundreds of short tests) last, where they fill the gap between the
# workers' ends; pytest-xdist's own order (the most tests first) left one worker idle for the
# last 40 s of a run on a busy 2-core machine. The order of make check's e2e modules by seconds on 2 cores (--durations);
# a module not listed runs after these, before tests/unit. Within a module the order is kept.
LONGEST_FIRST = ("test_catalog", "test_confinement", "test_hostile", "test_student_repo", "test_student_experience",
                 "test_fakes", "test_ci", "test_foundation", "test_toy_chapter", "test_efficiency",
                 "test_forkserver", "test_nbgrader", "test_formgrader", "test_no_data_loss", "test_platforms",
                 "test_determinism")


def pytest_collection_modifyitems(items):
    e2e = REPO / "tests" / "e2e"
    rank = {e2e / f"{name}.py": number for number, name in enumerate(LONGEST_FIRST)}

    def place(item) -> tuple[int, int]:
        if item.path in rank:
            return 0, rank[item.path]
        return (1 if item.path.is_relative_to(e2e) else 2), 0

    items.sort(key=place)  # stable: the collection order among equals


@pytest.fixture(scope="session")
def graded_solution(tmp_path_factory) -> CliRun:
    return run_grader(SOLUTION, tmp_path_factory.mktemp("solution"))


@pytest.fixture(scope="session")
def graded_release(tmp_path_factory) -> CliRun:
    return run_grader(RELEASE, tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="session")
def empty_gradebook(tmp_path_factory) -> Path:
    """An empty nbgrader gradebook, made once: tests copy this file instead of making their own.

    nbgrader's Gradebook makes the tables and records alembic's head revision, which it asks
    ``alembic heads`` for in a subprocess (a fresh Python importing nbgrader: seconds, most of
    the unit layer's set-up). Here the same head is read in this process, with alembic's own
    API from the configuration nbgrader writes for that command; the rest is nbgrader's code.
    The tests' nbgrader calls on their copies are unchanged, and nbgrader's own route (the
    subprocess) is what tests/e2e's nbgrader runs take."""
    api = pytest.importorskip("nbgrader.api", reason="nbgrader is not installed (make check-torch grades without it)")
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini

    def alembic_head() -> str:
        with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as alembic_ini:  # nbgrader's arguments
            return ScriptDirectory.from_config(Config(alembic_ini)).get_current_head()

    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api, "get_alembic_version", alembic_head)
        with api.Gradebook(f"sqlite:///{path}"):
            pass
    return path


@pytest.fixture
def gradebook_url(empty_gradebook, tmp_path) -> str:
    """A gradebook of this test's own (a copy of the empty one), as nbgrader's database URL."""
    path = tmp_path / "gradebook.db"
    shutil.copyfile(empty_gradebook, path)
    return f"sqlite:///{path}"


# -- the mistake catalog's figure (tests/e2e/test_catalog.py) ----------------------------------
def pytest_terminal_summary(terminalreporter):
    """One line each for the catalog's mistakes and correct variants, read from the
    properties test_catalog.py records (they survive pytest-xdist too)."""
    entries = [dict(report.user_properties) for outcome in ("passed", "failed")
               for report in terminalreporter.stats.get(outcome, []) if getattr(report, "when", "") == "call"]
    mistakes = [e for e in entries if e.get("catalog") == "mistake"]
    correct = [e for e in entries if e.get("catalog") == "correct"]
    if mistakes:
        caught = sum(bool(e.get("caught")) for e in mistakes)
        terminalreporter.write_line(f"mistake catalog: {caught}/{len(mistakes)} caught in their own stage "
                                    "with their hint")
    if correct:
        full = sum(bool(e.get("full_marks")) for e in correct)
        terminalreporter.write_line(f"correct variants: {full}/{len(correct)} graded full marks")
