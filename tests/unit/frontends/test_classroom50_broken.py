"""Issue 35: Classroom 50's grade run, when the grading itself broke, exits 1 (the runner records
an error) and leaves no result.json that could stand as this run's grade."""

from __future__ import annotations

import json

import pytest

from autograder.frontends import finder
from autograder.frontends.hosted import classroom50
from autograder.frontends.students import cli


@pytest.mark.parametrize(("error", "broke"), [
    (f"{cli.GRADER_FAILED} (RuntimeError: boom); please tell the course staff", True),
    ("", False),  # a graded notebook: its result is written
])
def test_a_broken_grading_exits_1_and_leaves_no_result(error, broke, tmp_path, monkeypatch):
    from autograder.core.engine import not_graded_report

    notebook = tmp_path / "ch03_attention.ipynb"
    notebook.write_text("{}")
    (tmp_path / classroom50.RESULT_FILE).write_text(json.dumps({"score": 100}))  # an earlier run's, or planted
    monkeypatch.setattr(finder, "find_in_repository", lambda workspace, chapter: (notebook, ""))

    def grade_report(args, chapter_, settings, stages, show_traceback=False):
        report = not_graded_report(chapter_, args.submission, error or "x")
        report.error = error
        return report, []

    monkeypatch.setattr(cli, "grade_report", grade_report)
    status = classroom50.grade(tmp_path, environ={})
    result = tmp_path / classroom50.RESULT_FILE
    if broke:
        assert status == 1 and not result.exists()
    else:
        assert status == 0 and json.loads(result.read_text())["score"] == 0


def test_build_replaces_only_an_earlier_build(tmp_path):
    from autograder.frontends.commands import Refused

    dest = tmp_path / "bundle"
    first, _ = classroom50.build(dest)
    assert classroom50.build(dest)[0] == first, "an earlier build, and nothing else, is rebuilt"
    (dest / "notes.txt").write_text("the instructor's")
    with pytest.raises(Refused, match="did not write"):
        classroom50.build(dest)
    (dest / "notes.txt").unlink()
    (dest / classroom50.GRADER_FOLDER / classroom50.MANIFEST_FILE).write_text("[]")  # a manifest not ours
    with pytest.raises(Refused, match="did not write"):
        classroom50.build(dest)
    assert (dest / classroom50.ENTRY_FILE).is_file(), "nothing was removed"
