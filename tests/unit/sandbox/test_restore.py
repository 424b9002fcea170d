"""The submitted file is kept (autograder.sandbox.restore)."""

from __future__ import annotations

from autograder.sandbox.restore import free_name, submission_kept


def test_an_untouched_file_needs_no_note(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"original")
    with submission_kept(path) as notes:
        pass
    assert notes == [] and path.read_bytes() == b"original"


def test_a_changed_file_is_put_back_and_the_change_kept_aside(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"original")
    (tmp_path / "nb.ipynb.changed-while-graded").write_bytes(b"an earlier one")
    with submission_kept(path) as notes:
        path.write_bytes(b"changed")
    assert path.read_bytes() == b"original"
    assert (tmp_path / "nb.ipynb.changed-while-graded.1").read_bytes() == b"changed"
    assert (tmp_path / "nb.ipynb.changed-while-graded").read_bytes() == b"an earlier one"
    assert "changed-while-graded.1" in notes[0]


def test_a_deleted_file_comes_back(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"original")
    with submission_kept(path) as notes:
        path.unlink()
    assert path.read_bytes() == b"original" and "put back" in notes[0]


def test_free_name(tmp_path):
    assert free_name(tmp_path / "x") == tmp_path / "x"
    (tmp_path / "x").touch()
    (tmp_path / "x.1").touch()
    assert free_name(tmp_path / "x") == tmp_path / "x.2"


STUB = "def softmax_naive(x):\n    raise NotImplementedError\n"


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
