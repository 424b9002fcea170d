"""The end-to-end tests' in-process gradings fork their workers from one server, as `make test`'s
are forks of the grader: one PyTorch import per pytest process instead of one per grading.
test_forkserver.py compares forked workers with fresh ones, which GPU gradings still start."""

from __future__ import annotations

import pytest

from autograder.sandbox import launch


@pytest.fixture(autouse=True)
def _workers_forked_from_a_server():
    launch.start_fork_server()  # returns at once while one runs; again after a test stopped it
