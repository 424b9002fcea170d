"""CheckStatus: one set of words and one mark per member, and every front end's table of
statuses covers every member (a new status must not surface as a KeyError mid-report)."""

from __future__ import annotations

import pytest

from autograder.core.checks import CheckStatus
from autograder.frontends.hosted import ci
from autograder.frontends.reports import console

MEMBERS = list(CheckStatus)


def test_there_are_four_statuses():
    assert {m.name for m in MEMBERS} == {"PASSED", "FAILED", "NOT_IMPLEMENTED", "STOPPED"}


@pytest.mark.parametrize("member", MEMBERS, ids=[m.name for m in MEMBERS])
def test_each_status_has_words_and_a_mark(member):
    assert isinstance(member.words, str) and member.words.strip()
    assert isinstance(member.mark, str) and member.mark.strip()


def test_words_are_one_per_member():
    words = [m.words for m in MEMBERS]
    assert len(set(words)) == len(MEMBERS), words


def test_marks_are_one_per_member():
    marks = [m.mark for m in MEMBERS]
    assert len(set(marks)) == len(MEMBERS), marks


def test_words_are_what_a_person_reads():
    assert {m: m.words for m in MEMBERS} == {
        CheckStatus.PASSED: "passed", CheckStatus.FAILED: "failed",
        CheckStatus.NOT_IMPLEMENTED: "not implemented yet", CheckStatus.STOPPED: "stopped"}


@pytest.mark.parametrize("table, name", [(ci.SUMMARY_MARK, "ci.SUMMARY_MARK"),
                                         (console.STATUS_STYLE, "console.STATUS_STYLE")],
                         ids=["ci_summary_mark", "console_status_style"])
def test_front_end_tables_cover_every_status(table, name):
    assert set(table) == set(MEMBERS), f"{name} misses {set(MEMBERS) - set(table)}"


def test_junit_has_an_outcome_for_every_status_but_passed():
    assert set(ci.JUNIT_OUTCOME) == set(MEMBERS) - {CheckStatus.PASSED}
    assert {tag for tag, _ in ci.JUNIT_OUTCOME.values()} <= {"failure", "error"}
