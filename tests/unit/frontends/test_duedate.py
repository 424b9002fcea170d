"""autograder/frontends/duedate.py: make duedate stores the UTC instant, in a real gradebook."""

from __future__ import annotations

from datetime import datetime

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
from nbgrader.api import Gradebook  # noqa: E402

from autograder.frontends.dates import InstantError  # noqa: E402
from autograder.frontends.duedate import set_duedate  # noqa: E402


def test_an_offset_and_a_zone_name_store_the_same_utc_instant(gradebook_url):
    db = gradebook_url
    assert set_duedate(db, "ch03", "2026-11-20 23:59:00 -0500") == "2026-11-21 04:59:00 UTC"
    assert set_duedate(db, "ch03", "2026-11-20 23:59 America/New_York") == "2026-11-21 04:59:00 UTC"
    with Gradebook(db) as gb:
        assert gb.find_assignment("ch03").duedate == datetime(2026, 11, 21, 4, 59)  # nbgrader's naive UTC


def test_an_abbreviation_is_refused_and_nothing_is_stored(gradebook_url):
    db = gradebook_url
    set_duedate(db, "ch03", "2026-11-20 12:00 UTC")
    with pytest.raises(InstantError, match="abbreviation"):
        set_duedate(db, "ch03", "2026-11-20 23:59 PST")
    with Gradebook(db) as gb:
        assert gb.find_assignment("ch03").duedate == datetime(2026, 11, 20, 12, 0)
