"""autograder/frontends/instructors/deadline.py: make duedate stores the UTC instant, in a real gradebook."""

from __future__ import annotations

from datetime import datetime

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
from nbgrader.api import Gradebook  # noqa: E402

from autograder.frontends.instructors.deadline import InstantError, set_duedate  # noqa: E402


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


def test_the_late_rule_quoted_in_the_docs_follows_nbgrader_config(tmp_path):
    """An instructor who changes LatePenalty in nbgrader_config.py reads their rule in the docs
    after make duedate, and in what it prints."""
    from autograder.frontends.instructors.deadline import late_rule, quote_late_rule

    page = tmp_path / "docs" / "instructors" / "nbgrader.md"
    page.parent.mkdir(parents=True)
    page.write_text("The rule: `per_day` (0.1) of the score, at most `cap` (0.5) of it. `per_day` alone stays.\n")
    assert quote_late_rule(tmp_path, 0.05, 0.3) == ["docs/instructors/nbgrader.md"]
    assert page.read_text() == "The rule: `per_day` (0.05) of the score, at most `cap` (0.3) of it. `per_day` alone stays.\n"
    assert quote_late_rule(tmp_path, 0.05, 0.3) == []
    assert "5% of the score" in late_rule(0.05, 0.3) and "at most 30%" in late_rule(0.05, 0.3)
