"""autograder/frontends/instructors/deadline.py: the instants instructors type, read one way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.frontends.instructors.deadline import EXAMPLES, InstantError, describe, parse_instant


@pytest.mark.parametrize(("text", "stored"), [
    ("2026-11-20 23:59:00 -0500", "2026-11-21 04:59:00 UTC"),  # the offset in hours, not -500 seconds
    ("2026-11-20T23:59:00-05:00", "2026-11-21 04:59:00 UTC"),
    ("2026-11-20 23:59 America/New_York", "2026-11-21 04:59:00 UTC"),  # EST in November
    ("2026-07-20 23:59 America/New_York", "2026-07-21 03:59:00 UTC"),  # EDT in July
    ("2026-11-20 23:59:00 UTC", "2026-11-20 23:59:00 UTC"),
    ("2026-11-20T04:59:00Z", "2026-11-20 04:59:00 UTC"),
    ("2026-11-20 9:05 +05:30", "2026-11-20 03:35:00 UTC"),
])
def test_each_form_names_its_utc_instant(text, stored):
    assert describe(parse_instant(text)) == stored


@pytest.mark.parametrize(("text", "says"), [
    ("2026-11-20 23:59 PST", "abbreviation"),
    ("20 Nov 2026 23:59 PST", "not a date and time"),
    ("2026-11-20 23:59", "no time zone"),
    ("2026-11-20", "not a date and time"),
    ("2026-11-20 23:59 Mars/Olympus", "not a time zone name"),
    ("2026-03-08 02:30 America/New_York", "does not exist"),
    ("2026-11-20 23:59 +15:00", "not a UTC offset"),
    ("2026-02-30 12:00 UTC", "day is out of range"),
])
def test_what_names_no_single_instant_is_refused_with_the_reason(text, says):
    with pytest.raises(InstantError, match=says):
        parse_instant(text)


def _quoted_instants(text: str) -> set[str]:
    """The UTC instants of the quoted dates in ``text`` (each one parsed as a user would type it)."""
    return {describe(parse_instant(q)) for q in re.findall(r'\\?"(\d{4}-\d\d-\d\d[ T][^"\\]+)\\?"', text)}


def test_the_examples_in_one_message_name_one_instant():
    """The refusal's examples, and the usage lines of make duedate and make grade-repos, each show
    one instant written several ways (a UTC example a day off would teach the wrong answer)."""
    assert _quoted_instants(EXAMPLES) == {"2026-11-21 04:59:00 UTC"}
    assert len(re.findall(r'"2026', EXAMPLES)) == 3
    makefile = (Path(__file__).resolve().parents[3] / "Makefile").read_text()
    usages = [line for line in makefile.splitlines() if "usage: make duedate" in line or "usage: make grade-repos" in line]
    assert len(usages) == 2
    for line in usages:
        assert _quoted_instants(line) == {"2026-11-21 04:59:00 UTC"}, line
