"""The scratch folder's size (autograder.sandbox.worker), measured on a temporary folder."""

from __future__ import annotations

import os
import threading

from autograder.sandbox.worker import SCRATCH_MOST_ENTRIES, ScratchWatch, empty_folder, scratch_usage


def test_usage_counts_what_files_take_beneath_the_folder(tmp_path):
    assert scratch_usage(str(tmp_path), 2**30) == 0
    (tmp_path / "a.bin").write_bytes(os.urandom(64 * 1024))
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "b.bin").write_bytes(os.urandom(32 * 1024))
    used = scratch_usage(str(tmp_path), 2**30)
    assert 96 * 1024 <= used < 96 * 1024 + 64 * 1024  # the files, and the folders' own blocks


def test_a_sparse_file_takes_only_what_was_written(tmp_path):
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(2**30)
    assert scratch_usage(str(tmp_path), 2**31) < 2**20


def test_counting_stops_once_past_the_limit(tmp_path):
    for name in "ab":
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(os.urandom(256 * 1024))
    full = scratch_usage(str(tmp_path), 2**30)
    early = scratch_usage(str(tmp_path), 1024)
    assert 1024 < early < full  # one folder counted, the other left


def test_a_tree_of_too_many_entries_counts_as_full(tmp_path):
    for i in range(5):
        (tmp_path / f"f{i}").touch()
    assert scratch_usage(str(tmp_path), 2**30, most_entries=5) is not None
    assert scratch_usage(str(tmp_path), 2**30, most_entries=4) is None
    assert SCRATCH_MOST_ENTRIES == 10_000


def test_empty_folder_removes_what_was_written_and_keeps_the_folder(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f").write_text("x")
    (tmp_path / "g").write_text("y")
    os.symlink(tmp_path / "d", tmp_path / "link")
    empty_folder(str(tmp_path))
    assert tmp_path.is_dir() and list(tmp_path.iterdir()) == []
    empty_folder(str(tmp_path / "missing"))  # nothing there: nothing to do


def test_the_watch_calls_over_past_the_limit(tmp_path):
    called = threading.Event()
    reasons = []

    def over(why):
        reasons.append(why)
        called.set()

    watch = ScratchWatch(str(tmp_path), 16 * 1024, over, every=0.01)
    try:
        assert not called.wait(0.1)  # under the limit: quiet
        (tmp_path / "big").write_bytes(os.urandom(64 * 1024))
        assert called.wait(5)
    finally:
        watch.stop()
    assert "GiB of files (the limit of its scratch folder)" in reasons[0]


def test_the_scratch_count_takes_what_files_hold_on_disk(tmp_path):
    """A sparse file costs the blocks it holds; a tree of too many entries counts as full
    (``None``), so that counting it never slows the grader."""
    with open(tmp_path / "sparse.bin", "wb") as handle:
        handle.truncate(2**30)  # 1 GiB of holes: no blocks
    (tmp_path / "data.bin").write_bytes(os.urandom(1 << 20))
    assert 1 << 20 <= scratch_usage(str(tmp_path), 2**31) < 2 << 20
    (tmp_path / "many").mkdir()
    for i in range(20):
        (tmp_path / "many" / str(i)).touch()
    assert scratch_usage(str(tmp_path), 2**31, most_entries=20) is None
    assert scratch_usage(str(tmp_path), 2**31, most_entries=30) is not None


def test_a_tree_deeper_than_the_recursion_limit_is_measured(tmp_path, monkeypatch):
    """os.walk recurses: a tree this deep would raise RecursionError and end the watch's thread."""
    monkeypatch.chdir(tmp_path)
    made = 0
    try:
        while made < 1500:
            os.mkdir("a")
            os.chdir("a")
            made += 1
        assert scratch_usage(str(tmp_path), 2**31) is not None
    finally:  # removed here: shutil.rmtree, pytest's clean-up, recurses too before Python 3.12
        for _ in range(made):
            os.chdir("..")
            os.rmdir("a")
