"""autograder/frontends/duedate.py: make duedate stores the UTC instant, in a real gradebook."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (make check-torch grades without it)")
from nbgrader.api import Gradebook  # noqa: E402

from autograder.frontends.dates import InstantError  # noqa: E402
from autograder.frontends.duedate import set_duedate  # noqa: E402


@pytest.fixture(autouse=True)
def _alembic_on_path(monkeypatch):
    """nbgrader creates a gradebook with alembic, from PATH (the Makefile puts the venv's bin first)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def test_an_offset_and_a_zone_name_store_the_same_utc_instant(tmp_path):
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    assert set_duedate(db, "ch03", "2026-11-20 23:59:00 -0500") == "2026-11-21 04:59:00 UTC"
    assert set_duedate(db, "ch03", "2026-11-20 23:59 America/New_York") == "2026-11-21 04:59:00 UTC"
    with Gradebook(db) as gb:
        assert gb.find_assignment("ch03").duedate == datetime(2026, 11, 21, 4, 59)  # nbgrader's naive UTC


def test_an_abbreviation_is_refused_and_nothing_is_stored(tmp_path):
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    set_duedate(db, "ch03", "2026-11-20 12:00 UTC")
    with pytest.raises(InstantError, match="abbreviation"):
        set_duedate(db, "ch03", "2026-11-20 23:59 PST")
    with Gradebook(db) as gb:
        assert gb.find_assignment("ch03").duedate == datetime(2026, 11, 20, 12, 0)
