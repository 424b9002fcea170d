"""The commit each student repository held at a deadline, by a clock the student does not hold:
GitHub's record of the pushes, or the tips make collect-repos recorded; commit dates only if asked.
And the instants instructors type, read one way by every command (:func:`parse_instant`), such as
``make duedate``'s (nbgrader's own reading takes ``-0500`` for minus 500 seconds and ``PST`` for UTC)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.frontends.commands import Refused
from autograder.frontends.reports.safe_write import write_atomic

_DATE_TIME = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})[T ](\d{1,2}:\d{2}(?::\d{2})?)\s*(.*?)\s*$")
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{2}):?(\d{2})$", re.I)
_UTC_WORDS = {"z", "utc", "gmt", "utc+0", "utc+00:00", "+00:00", "+0000"}
# One instant written three ways: an example that names another day misleads.
EXAMPLES = '"2026-11-20 23:59:00 -0500", "2026-11-20 23:59 America/New_York" or "2026-11-21T04:59:00Z"'


class InstantError(ValueError):
    """The text names no single instant; the message says why and shows what works."""


def parse_instant(text: str) -> datetime:
    """A date and time with an offset, ``Z``, UTC or an IANA zone name, in UTC; never a bare time
    (the grading machine's zone may not be the instructor's) nor an abbreviation such as PST."""
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
    if offset := _OFFSET.match(zone):
        sign, hours, minutes = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        if delta > timedelta(hours=14) or int(minutes) >= 60:
            raise InstantError(f"{text!r}: {zone} is not a UTC offset (at most ±14:00)")
        return local.replace(tzinfo=timezone(delta if sign == "+" else -delta)).astimezone(timezone.utc)
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


def _git(repo: Path, *args: str, text: bool = True) -> subprocess.CompletedProcess | None:
    """A read-only git command in ``repo`` (no lock files, no writes); None when git failed to run."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}  # a scheduled run cannot answer a prompt
    try:
        return subprocess.run(["git", "-c", f"safe.directory={repo}", "-C", str(repo), *args],
                              capture_output=True, text=text, timeout=120, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_output(repo: Path, *args: str) -> str | None:
    """What a read-only git command printed, stripped; None when it failed."""
    proc = _git(repo, *args)
    return proc.stdout.strip() if proc is not None and proc.returncode == 0 else None


def commit_date(repo: Path, commit: str) -> str:
    """The commit's committer date in UTC ('' when unknown)."""
    try:
        return describe(datetime.fromisoformat(commit and git_output(repo, "show", "-s", "--format=%cI", commit, "--") or ""))
    except ValueError:
        return ""


def graded_branch(repo: Path) -> str:
    """The checked-out branch, else the default branch origin's HEAD names ('' when neither)."""
    for ref in ("HEAD", "refs/remotes/origin/HEAD"):
        if branch := git_output(repo, "symbolic-ref", "-q", "--short", ref):
            return branch.removeprefix("origin/")
    return ""


GITHUB_ORIGIN = re.compile(r"github\.com[:/]+([\w.-]+)/([\w.-]+?)(?:\.git)?/*$")
HOW_TO_TRUST = ("install the GitHub CLI and log in (gh auth login), or run make collect-repos at the deadline and "
                "give its file as COLLECTED=; TRUST_COMMIT_DATES=1 grades by the commit dates the students set")
TRUSTED_DATES = "graded by the commit's own date, which the student's machine sets (TRUST_COMMIT_DATES=1)"


@dataclass
class Pick:
    commit: str = ""
    note: str = ""     # how the commit was chosen, for the reason column
    refusal: str = ""  # why none is graded


def _local(repo: Path, commit: str, when: str) -> Pick:
    if git_output(repo, "cat-file", "-e", f"{commit}^{{commit}}") is not None:
        return Pick(commit, when)
    return Pick(refusal=f"{commit[:12]} ({when}) is not in this clone; fetch first (git -C {repo} fetch)")


def server_refusal() -> str:
    """Why GitHub's record cannot be read here ('' when gh runs and is logged in to github.com)."""
    try:
        proc = subprocess.run(["gh", "auth", "status", "--hostname", "github.com"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the GitHub CLI (gh) did not run ({exc})"
    return "" if proc.returncode == 0 else f"gh is not logged in to github.com ({(proc.stderr or proc.stdout).strip()[:200]})"


def activities(name: str, branch: str) -> list[dict]:
    """GitHub's "List repository activities" for the branch, every page; OSError when gh fails."""
    endpoint = f"repos/{name}/activity?ref={quote('refs/heads/' + branch, safe='')}&per_page=100"
    try:
        proc = subprocess.run(["gh", "api", "--paginate", endpoint], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OSError(f"gh api {endpoint}: {exc}") from None
    if proc.returncode != 0:
        raise OSError(f"gh api {endpoint}: {proc.stderr.strip()[:300] or f'exit status {proc.returncode}'}")
    # gh prints a JSON array per page (one merged array from gh 2.48 on): read them all.
    found, text, at = [], proc.stdout.strip(), 0
    while at < len(text):
        page, at = json.JSONDecoder().raw_decode(text, at)
        found += page
        at = len(text) - len(text[at:].lstrip())
    return [a for a in found if a["ref"] in (f"refs/heads/{branch}", branch)]


def pushed_commit(repo: Path, deadline: datetime) -> Pick:
    """The commit the branch held at the deadline by GitHub's record; a later push is named."""
    origin = GITHUB_ORIGIN.search(git_output(repo, "config", "--get", "remote.origin.url") or "")
    name, branch = (f"{origin[1]}/{origin[2]}" if origin else ""), graded_branch(repo)
    if not name or not branch:
        return Pick(refusal=f"no push record: {'origin is not a github.com repository' if branch else 'no branch'}; "
                            f"{HOW_TO_TRUST}")
    try:  # "Z": Python 3.10's fromisoformat does not read it
        record = sorted((datetime.fromisoformat(a["timestamp"].replace("Z", "+00:00")), a["after"])
                        for a in activities(name, branch))
        on_time = [(when, commit) for when, commit in record if when <= deadline]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return Pick(refusal=f"no push record: {exc}; {HOW_TO_TRUST}")
    late = ""
    if len(on_time) < len(record):
        when, commit = record[len(on_time)]
        claimed = commit_date(repo, commit)
        late = (f"pushed {describe(when)}, after the deadline: {commit[:10]}"
                f"{f', whose committer date says {claimed}' if claimed else ''}, not graded")
    if not on_time:
        return Pick(refusal="; ".join(p for p in (f"no push at or before the deadline ({describe(deadline)})", late) if p))
    when, commit = on_time[-1]
    if not commit.strip("0"):  # the "after" of a deletion
        return Pick(refusal=f"the branch was deleted {describe(when)}, before the deadline")
    pick = _local(repo, commit, f"pushed {describe(when)} (GitHub's record)")
    return Pick(pick.commit, "; ".join(p for p in (pick.note, late) if p), pick.refusal)


def choose_commit(student: str, repo: Path, deadline: datetime | None, collected: dict | None, trust: bool) -> Pick:
    if collected is not None:
        entry = collected.get(student) or {}
        if not entry.get("commit"):
            return Pick(refusal=f"not collected: {entry.get('error', 'not in the collection')}")
        when = datetime.fromisoformat(entry["collected"])
        after = f", {(when - deadline).total_seconds():+.0f} s from the deadline" if deadline else ""
        return _local(repo, entry["commit"], f"the tip collected {describe(when)} by the instructor's clock{after}")
    if trust:  # the branch's last commit whose committer date (the student's) is at or before the deadline
        commit = git_output(repo, "rev-list", "-1", f"--before={int(deadline.timestamp())}", "HEAD", "--")
        return Pick(commit, TRUSTED_DATES) if commit else \
            Pick(refusal=f"no commit dated at or before the deadline ({describe(deadline)}) by the student's machine "
                         f"(TRUST_COMMIT_DATES=1)")
    return pushed_commit(repo, deadline)


def collect_one(repo: Path) -> dict:
    """The origin's tip of the graded branch now (``git ls-remote``)."""
    branch = graded_branch(repo)
    proc = _git(repo, "ls-remote", "origin", f"refs/heads/{branch}") if branch else None
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if proc is None or proc.returncode != 0 or not proc.stdout.split():
        why = (proc.stderr.strip()[:200] if proc is not None else "") or f"no branch {branch!r} on origin"
        return {"error": f"{why} (at {when})"}
    return {"commit": proc.stdout.split()[0], "branch": branch, "collected": when}


def collect(repos: Path, students: dict[str, Path], into: Path) -> int:
    """``make collect-repos``: each repository's tip at this moment, into a new file."""
    if into.exists() or repos.resolve() in into.resolve().parents:
        raise Refused(f"{into} {'exists' if into.exists() else f'is inside {repos}'}; give a new file (COLLECTED=...)")
    with ThreadPoolExecutor(max_workers=8) as pool:  # at the deadline: every origin asked at once
        found = dict(zip(students, pool.map(collect_one, students.values())))
    write_atomic(into, json.dumps(found, indent=1, sort_keys=True) + "\n")
    for student, entry in found.items():
        print(f"{student}: {entry.get('commit', '')[:10] or entry['error']}")
    print(f"{len(found)} repositories collected into {into}; after the deadline: fetch, then "
          f"make grade-repos REPOS={repos} COLLECTED={into}")
    return 0


def set_duedate(db_url: str, assignment: str, text: str) -> str:
    """``make duedate``: the due date stored; what the gradebook now holds."""
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
