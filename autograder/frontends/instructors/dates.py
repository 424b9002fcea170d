"""An instant an instructor types (a due date, a deadline), read one way by every command.

Accepted: ISO 8601 with an offset or ``Z``, or a date and time followed by ``UTC``/``GMT`` or an
IANA zone name (that date's offset). Refused: a date alone, a time with no zone (the grading
machine's zone may not be the instructor's) and abbreviations such as ``PST``, which name no
single offset. The answer is an aware datetime in UTC.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_DATE_TIME = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})[T ](\d{1,2}:\d{2}(?::\d{2})?)\s*(.*?)\s*$")
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{2}):?(\d{2})$", re.I)
_UTC_WORDS = {"z", "utc", "gmt", "utc+0", "utc+00:00", "+00:00", "+0000"}
# One instant written three ways: an example that names another day misleads.
EXAMPLES = '"2026-11-20 23:59:00 -0500", "2026-11-20 23:59 America/New_York" or "2026-11-21T04:59:00Z"'


class InstantError(ValueError):
    """The text names no single instant; the message says why and shows what works."""


def parse_instant(text: str) -> datetime:
    match = _DATE_TIME.match(text or "")
    if not match:
        raise InstantError(f"{text!r} is not a date and time; write it as {EXAMPLES}")
    day, clock, zone = match.groups()
    try:
        local = datetime.fromisoformat(f"{day} {clock.zfill(5) if clock.count(':') == 1 else clock.zfill(8)}")
    except ValueError as exc:
        raise InstantError(f"{text!r}: {exc}") from None
    if not zone:
        raise InstantError(f"{text!r} has no time zone, so it would be read in whatever zone the grading machine "
                           f"is in; add one: {EXAMPLES}")
    if zone.lower() in _UTC_WORDS:
        return local.replace(tzinfo=timezone.utc)
    offset = _OFFSET.match(zone)
    if offset:
        sign, hours, minutes = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        if delta > timedelta(hours=14) or int(minutes) >= 60:
            raise InstantError(f"{text!r}: {zone} is not a UTC offset (at most ±14:00)")
        tz = timezone(delta if sign == "+" else -delta)
        return local.replace(tzinfo=tz).astimezone(timezone.utc)
    if "/" in zone:
        try:
            tz = ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise InstantError(f"{text!r}: {zone!r} is not a time zone name (e.g. America/New_York, Europe/Berlin)") from None
        aware = local.replace(tzinfo=tz)
        if aware.astimezone(timezone.utc).astimezone(tz).replace(tzinfo=None) != local:
            raise InstantError(f"{text!r}: that clock time does not exist in {zone} (the clocks skip it)")
        return aware.astimezone(timezone.utc)
    hint = ""
    if zone.isalpha() and zone.upper() == zone:
        hint = (f" {zone} is an abbreviation, which names no single offset (CST is both -06:00 and +08:00, and "
                "PST/PDT change with the season); use a zone name such as America/Los_Angeles, or an offset.")
    raise InstantError(f"{text!r}: {zone!r} is not a time zone.{hint} Write it as {EXAMPLES}")


def describe(instant: datetime) -> str:
    """``2026-11-21 04:59:00 UTC``: how every command prints a stored instant."""
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
