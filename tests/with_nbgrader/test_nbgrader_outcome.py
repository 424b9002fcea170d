"""autograder/frontends/instructors/nbgrader/stages.py: each autograde's outcome, read by make export."""

from __future__ import annotations

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
from autograder.frontends.instructors.nbgrader.stages import (  # noqa: E402
    UNFINISHED,
    diagnosis_path,
    read_outcome,
    write_outcome,
)


def test_a_run_is_unfinished_until_it_is_recorded_graded(tmp_path):
    assert read_outcome("ada", "ch03", tmp_path) is None
    write_outcome("ada", "ch03", False, UNFINISHED, ["cell 5 is a copy"], tmp_path)
    assert read_outcome("ada", "ch03", tmp_path) == {"graded": False, "reason": UNFINISHED, "notes": ["cell 5 is a copy"]}
    write_outcome("ada", "ch03", True, "", root=tmp_path)
    assert read_outcome("ada", "ch03", tmp_path) == {"graded": True, "reason": "", "notes": ["cell 5 is a copy"]}
    write_outcome("ada", "ch03", False, "KeyError: 'grade_id'", root=tmp_path)
    assert read_outcome("ada", "ch03", tmp_path)["reason"] == "KeyError: 'grade_id'"
    assert not read_outcome("ada", "ch03", tmp_path)["graded"]


def test_an_id_that_is_not_one_folder_name_has_no_record(tmp_path):
    write_outcome("../x", "ch03", False, "boom", root=tmp_path)  # written nowhere
    assert not any(tmp_path.rglob("*.json"))


def test_the_nbgrader_record_path_takes_one_folder_name_each(tmp_path):
    assert diagnosis_path(tmp_path, "ada", "ch03_attention") == tmp_path / "ada" / "ch03_attention.json"
    for student in ("", ".", "..", "a/b", "../x", "a\\b"):
        assert diagnosis_path(tmp_path, student, "ch03_attention") is None
