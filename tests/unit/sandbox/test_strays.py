"""Stray processes (autograder.sandbox.strays), on real child processes (``sleep``)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from autograder.sandbox import oslayer, strays
from autograder.sandbox.child import HANDSHAKE

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")


@pytest.fixture
def sleeper():
    proc = subprocess.Popen(["sleep", "30"])
    yield proc
    proc.kill()
    proc.wait()


def test_children_of_finds_a_child_until_it_is_collected(sleeper):
    assert sleeper.pid in strays.children_of(os.getpid())
    assert sleeper.pid not in strays.children_of(1) or os.getpid() == 1
    sleeper.kill()
    sleeper.wait()
    assert sleeper.pid not in strays.children_of(os.getpid())


def test_a_zombie_is_not_alive(sleeper):
    assert oslayer.parent_and_group(sleeper.pid) == (os.getpid(), os.getpgrp())
    sleeper.kill()
    give_up = time.monotonic() + 5
    while oslayer.parent_and_group(sleeper.pid) is not None and time.monotonic() < give_up:
        time.sleep(0.01)
    assert oslayer.parent_and_group(sleeper.pid) is None
    assert sleeper.pid in strays.children_of(os.getpid())  # a zombie until collected


def test_end_stray_processes_ends_the_children_that_belong(sleeper):
    # the test process's own children (multiprocessing's resource tracker, left by an earlier
    # test's process pool) are known too: ended, it is relaunched with a warning and errors
    before = strays.children_of(os.getpid()) - {sleeper.pid}
    other = subprocess.Popen(["sleep", "30"])
    try:
        strays.end_stray_processes(belongs=lambda pid: pid == sleeper.pid)
        assert sleeper.poll() is not None  # ended and collected
        assert other.poll() is None  # not ours to end
        strays.end_stray_processes(known={other.pid, sleeper.pid} | before)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_a_process_descends_from_a_worker_by_its_token(sleeper):
    marked = subprocess.Popen(["sleep", "30"], env={**os.environ, HANDSHAKE: '{"token": "t0ken-42"}'})
    try:
        # until it runs sleep, the fork's environment is still this process's
        give_up = time.monotonic() + 10
        while Path(f"/proc/{marked.pid}/cmdline").read_bytes().split(b"\0")[0] != b"sleep":
            assert time.monotonic() < give_up, "sleep never started"
            time.sleep(0.01)
        assert strays.descends_from_worker(marked.pid, set(), None, "t0ken-42")
        assert not strays.descends_from_worker(sleeper.pid, set(), None, "t0ken-42")
        assert strays.descends_from_worker(sleeper.pid, {os.getsid(sleeper.pid)}, None, "other")
        assert not strays.descends_from_worker(2**22 + 12345, set(), None, "t0ken-42")  # no such pid
    finally:
        marked.kill()
        marked.wait()


def test_seccomp_filters_of_this_process():
    found = strays.seccomp_filters("self")
    assert found is None or found >= 0
    assert strays.seccomp_filters(2**22 + 12345) is None
