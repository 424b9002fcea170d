"""The sandbox's exception (autograder.sandbox.errors), re-exported by core.failures."""

from __future__ import annotations

from autograder.core import failures
from autograder.sandbox.errors import StageAborted, ended_the_stage


def test_core_catches_the_sandbox_exception():
    assert failures.StageAborted is StageAborted


def test_a_stage_ended_by_the_grader_says_why_else_blames_an_exit():
    full = ended_the_stage("the scratch folder is full")
    assert full.message == "the scratch folder is full" and "large files" in full.hint
    exited = ended_the_stage()
    assert "ended the grading process" in exited.message and "sys.exit" in exited.hint
