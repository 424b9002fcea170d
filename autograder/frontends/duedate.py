"""``make duedate``: the assignment's due date in the gradebook, read by :mod:`.dates`.

nbgrader's own ``db assignment add --duedate`` reads ``-0500`` as minus 500 *seconds* and
``PST`` as UTC with only a library warning; every late penalty computed from such a date is
wrong. Here the text is read by :func:`~autograder.frontends.dates.parse_instant` (an offset,
a zone name or UTC; anything else refused with the reason), stored through nbgrader's API as
the naive UTC time nbgrader keeps, and printed back with its zone.

    python -m autograder.frontends.duedate ASSIGNMENT "2026-11-20 23:59:00 -0500"
"""

from __future__ import annotations

import argparse
import sys
from datetime import timezone

from autograder.frontends.dates import InstantError, describe, parse_instant


def set_duedate(db_url: str, assignment: str, text: str) -> str:
    """Stores the instant ``text`` names as ``assignment``'s due date; returns what the
    gradebook now holds, in :func:`~autograder.frontends.dates.describe`'s words."""
    from nbgrader.api import Gradebook

    instant = parse_instant(text)
    with Gradebook(db_url) as gb:
        # nbgrader compares naive datetimes that it takes to be UTC (its timestamps are too).
        gb.update_or_create_assignment(assignment, duedate=instant.astimezone(timezone.utc).replace(tzinfo=None))
        stored = gb.find_assignment(assignment).duedate
    return describe(stored.replace(tzinfo=timezone.utc))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.frontends.duedate", description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("due", help='e.g. "2026-11-20 23:59:00 -0500" or "2026-11-20 23:59 America/New_York"')
    args = parser.parse_args(argv)
    from nbgrader.apps.baseapp import NbGrader

    app = NbGrader()  # reads nbgrader_config.py from the current directory, as nbgrader's commands do
    app.initialize([])
    try:
        stored = set_duedate(app.coursedir.db_url, args.assignment, args.due)
    except InstantError as exc:
        print(f"make duedate: nothing stored: {exc}", file=sys.stderr)
        return 2
    print(f"{args.assignment} is due {stored} (late penalties: make autograde again)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
