"""``make duedate``: the due date in the gradebook, read by :func:`parse_instant` (nbgrader's own
reads ``-0500`` as minus 500 seconds and ``PST`` as UTC)."""

from __future__ import annotations

import argparse
import re
from datetime import timezone
from pathlib import Path

from autograder.frontends.commands import Refused
from autograder.frontends.instructors.deadline import InstantError, describe, parse_instant


def set_duedate(db_url: str, assignment: str, text: str) -> str:
    """Store the due date; what the gradebook now holds."""
    from nbgrader.api import Gradebook

    instant = parse_instant(text)
    with Gradebook(db_url) as gb:
        # nbgrader compares naive datetimes that it takes to be UTC
        gb.update_or_create_assignment(assignment, duedate=instant.astimezone(timezone.utc).replace(tzinfo=None))
        stored = gb.find_assignment(assignment).duedate
    return describe(stored.replace(tzinfo=timezone.utc))


def late_rule(per_day: float, cap: float) -> str:
    return (f"late penalty: {per_day:.0%} of the score (without the bonus) for each day or part of a day late, "
            f"at most {cap:.0%} (LatePenalty in nbgrader_config.py)")


def quote_late_rule(root: Path, per_day: float, cap: float) -> list[str]:
    """The docs' quotes of the rule set from nbgrader_config.py; the pages changed."""
    changed, rule = [], {"per_day": per_day, "cap": cap}
    for page in sorted((root / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        new = re.sub(r"`(per_day|cap)` \([\d.]+\)", lambda m: f"`{m.group(1)}` ({rule[m.group(1)]:g})", text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page.relative_to(root).as_posix())
    return changed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment")
    parser.add_argument("due", help='e.g. "2026-11-20 23:59:00 -0500" or "2026-11-20 23:59 America/New_York"')


def run(args: argparse.Namespace) -> int:
    from nbgrader.apps.baseapp import NbGrader

    app = NbGrader()  # reads nbgrader_config.py from the current directory
    app.initialize([])
    try:
        stored = set_duedate(app.coursedir.db_url, args.assignment, args.due)
    except InstantError as exc:
        raise Refused(f"make duedate: nothing stored: {exc}") from None
    from autograder.frontends.instructors.nbgrader.plugins import LatePenalty

    rule = LatePenalty(config=app.config)
    print(f"{args.assignment} is due {stored}; {late_rule(rule.per_day, rule.cap)} (late penalties: make autograde again)")
    if pages := quote_late_rule(Path.cwd(), rule.per_day, rule.cap):
        print("the late rule quoted in " + ", ".join(pages) + " now follows nbgrader_config.py")
    return 0
