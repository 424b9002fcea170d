"""autograder.sandbox.client's helpers that need no worker: the scratch folder's count and the
submission kept safe while it is graded."""

from __future__ import annotations

import os

from autograder.sandbox.client import submission_kept

STUB = "def softmax_naive(x):\n    raise NotImplementedError\n"


def test_the_scratch_count_takes_what_files_hold_on_disk(tmp_path):
    """A sparse file costs the blocks it holds; a tree of too many entries counts as full
    (``None``), so that counting it never slows the grader."""
    from autograder.sandbox.client import scratch_usage

    with open(tmp_path / "sparse.bin", "wb") as handle:
        handle.truncate(2**30)  # 1 GiB of holes: no blocks
    (tmp_path / "data.bin").write_bytes(os.urandom(1 << 20))
    assert 1 << 20 <= scratch_usage(str(tmp_path), 2**31) < 2 << 20
    (tmp_path / "many").mkdir()
    for i in range(20):
        (tmp_path / "many" / str(i)).touch()
    assert scratch_usage(str(tmp_path), 2**31, most_entries=20) is None
    assert scratch_usage(str(tmp_path), 2**31, most_entries=30) is not None


def test_a_submission_replaced_by_a_folder_is_restored_and_the_folder_kept(tmp_path):
    submission = tmp_path / "work.py"
    submission.write_text(STUB)
    with submission_kept(submission) as notes:
        submission.unlink()
        submission.mkdir()
        (submission / "notes.txt").write_text("a student's notes")
    assert submission.read_text() == STUB
    kept = tmp_path / "work.py.changed-while-graded"
    assert (kept / "notes.txt").read_text() == "a student's notes"
    assert notes and "kept as work.py.changed-while-graded" in notes[0]
