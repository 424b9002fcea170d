"""A second lane (autograder.sandbox.lanes): a copy of the loaded worker, made before any stage,
that forks the stages sent through pipes of its own while the loaded worker forks the others.
Each lane's copies start from the same loaded state; a lane that breaks ends its own stage only.
(That grading on two lanes changes no grade: tests/e2e/test_determinism.py.)"""

from __future__ import annotations

import os
import platform
import signal
import time

import pytest

from autograder.sandbox import oslayer
from autograder.sandbox.errors import StageAborted
from autograder.sandbox.limits import Limits
from autograder.sandbox.loader import Cell
from autograder.sandbox.settings import Settings
from autograder.sandbox.strays import is_alive
from autograder.sandbox.worker import Worker

pytestmark = pytest.mark.skipif(not oslayer.stages_fork(), reason="stages run in forked copies on Linux only")

PROBE = '''
import os

seen = []

def note(value):
    seen.append(value)
    return len(seen)

def ids():
    return [os.getpid(), os.getppid()]

def pipes():
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("pipe:"):
            found.add(target)
    return sorted(found)

def lane_variable():
    import json
    return str(json.loads(os.environ.get("AUTOGRADER_WORKER", "{}")).get("lane", ""))

import gc

collecting_when_loaded = gc.isenabled()

def collecting():
    return [collecting_when_loaded, gc.isenabled()]

import ctypes
import resource

def faults_of_large_blocks_made_again():
    # a 64 MB block made, filled and freed, four times: the page faults of the last three
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    faults = []
    for _ in range(4):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        block = libc.malloc(64 * 2**20)
        libc.memset(block, 1, 64 * 2**20)
        libc.free(block)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return sum(faults[1:])
'''


def _call(lane, name: str, *args):
    return lane.request({"op": "call", "name": name, "args": list(args)})["ok"]["repr"]


@pytest.fixture
def worker():
    made = Worker([Cell(1, PROBE, "probe.py")], "cpu", Settings(limits=Limits(lanes=2)))
    made.start()
    yield made
    made.close()


def test_both_lanes_grade_copies_of_the_same_loaded_state_through_pipes_of_their_own(worker):
    lane = worker.open_lane()
    assert lane is not None and not lane.main
    lane.begin_stage(4)
    worker.begin_stage(7)  # two stages at once
    assert _call(lane, "note", "beside") == _call(worker.main_lane, "note", "main") == "1"
    side_pid, side_parent = eval(_call(lane, "ids"))
    main_pid, main_parent = eval(_call(worker.main_lane, "ids"))
    assert main_parent == worker.proc.pid and side_parent == lane.loader_pid != worker.proc.pid
    assert oslayer.parent_and_group(lane.loader_pid)[0] == worker.proc.pid  # the loader: a copy of the loaded worker
    # neither lane's copy holds the other's pipes, and the submission never sees where they are
    assert not set(eval(_call(lane, "pipes"))) & set(eval(_call(worker.main_lane, "pipes")))
    assert _call(lane, "lane_variable") == _call(worker.main_lane, "lane_variable") == "''"
    lane.end_stage()
    worker.end_stage()
    lane.begin_stage(5)  # the next stage's copy: the loaded state again
    assert _call(lane, "note", "again") == "1"
    lane.end_stage()
    lane.close()


def test_the_cells_and_each_lanes_stages_collect_garbage(worker):
    # the worker imports with the collector off (child.imports_uncollected), the side lane's loader
    # too (the meta device's modules): the submission's cycles are collected as anywhere
    lane = worker.open_lane(warm_up=True)
    lane.begin_stage(4)
    worker.begin_stage(7)
    assert _call(lane, "collecting") == _call(worker.main_lane, "collecting") == "[True, True]"
    lane.end_stage()
    worker.end_stage()
    lane.close()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_a_stage_copy_reuses_the_memory_its_tensors_freed(worker):
    # child._keep_freed_memory: a 64 MB block freed and made again is not mapped and zeroed afresh
    # (16,384 pages of 4 KiB each time without it: glibc maps a block that large on its own)
    worker.begin_stage(7)
    assert int(_call(worker.main_lane, "faults_of_large_blocks_made_again")) < 1000
    worker.end_stage()


def test_a_side_lane_whose_loader_dies_ends_its_own_stage_only(worker):
    lane = worker.open_lane()
    lane.begin_stage(4)
    worker.begin_stage(7)
    loader, copy = lane.loader_pid, lane.stage_pid
    os.kill(loader, signal.SIGKILL)  # its stage's copy dies with it
    give_up = time.monotonic() + 10
    while (is_alive(loader) or is_alive(copy)) and time.monotonic() < give_up:
        time.sleep(0.01)
    with pytest.raises(StageAborted):
        _call(lane, "note", 1)
    assert not lane.alive
    assert _call(worker.main_lane, "note", 1) == "1"
    worker.end_stage()
    lane.begin_stage(5)  # a lane that ended grades nothing more: its stages go to the main lane
    with pytest.raises(StageAborted):
        _call(lane, "note", 1)
    lane.close()


def test_no_lane_opens_once_a_stage_ran_and_the_main_lane_grades_on(worker):
    worker.begin_stage(1)
    worker.end_stage()
    assert worker.open_lane() is None
    worker.begin_stage(2)
    assert _call(worker.main_lane, "note", 1) == "1"
    worker.end_stage()


def test_one_lane_where_asked_passes_no_lane_to_the_worker():
    single = Worker([Cell(1, PROBE, "probe.py")], "cpu", Settings(limits=Limits(lanes=1)))
    try:
        single.start()
        assert single.open_lane() is None
        single.begin_stage(1)
        assert _call(single.main_lane, "lane_variable") == "''"
        single.end_stage()
    finally:
        single.close()
