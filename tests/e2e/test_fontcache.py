"""matplotlib's font list kept between gradings (autograder.sandbox.fontcache), with real workers:
the list a worker wrote before any cell ran is kept and put in the next worker's scratch folder;
a list the submission wrote is never kept."""

from __future__ import annotations

import pytest

from autograder.sandbox import fontcache
from autograder.sandbox.loader import Cell
from autograder.sandbox.settings import Settings
from autograder.sandbox.worker import Worker

LISTING = '''
import os

def scratch_files():
    return sorted(os.listdir("."))
'''


def _worker(cells):
    return Worker(cells, "cpu", Settings())


def _listing(worker) -> list:
    worker.begin_stage(1)
    try:
        return eval(worker.request({"op": "call", "name": "scratch_files", "args": []})["ok"]["repr"])
    finally:
        worker.end_stage()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return fontcache.cache_folder()


def test_the_list_a_worker_wrote_is_in_the_next_workers_scratch_folder_from_the_start(cache):
    first = _worker([Cell(1, LISTING, "listing.py")])
    try:
        first.start()
    finally:
        first.close()
    kept = [p.name for p in cache.iterdir()]
    assert len(kept) == 1 and kept[0].startswith("fontlist-v")  # matplotlib wrote it while the worker imported
    second = _worker([Cell(1, LISTING, "listing.py")])
    try:
        second.start()
        assert kept[0] in _listing(second)
    finally:
        second.close()


def test_a_list_the_submission_wrote_is_not_kept_even_after_a_restart(cache):
    # the first cell writes a list of its own and ends the worker: the worker restarts (without
    # that cell) in the same scratch folder, and says it is ready again
    planted = "fontlist-v9.9.json"
    worker = _worker([Cell(1, f"open({planted!r}, 'w').write('{{}}')\nimport os\nos._exit(3)", "plant.py"),
                      Cell(2, LISTING, "listing.py")])
    try:
        worker.start()
        assert planted in _listing(worker)
    finally:
        worker.close()
    assert planted not in [p.name for p in cache.iterdir()]
