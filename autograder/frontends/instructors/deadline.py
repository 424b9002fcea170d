"""The commit each student repository held at a deadline, by a clock the student does not hold.

A committer date is set by the student's machine, so a late push can claim an early date. The
commit comes from GitHub's record of the pushes (``gh api``, the instructor's login) or from the
tips ``make collect-repos`` recorded at the deadline; the commit's own date only with
``TRUST_COMMIT_DATES=1``, which every row then says. The clones are only read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from autograder.frontends.instructors.dates import describe
from autograder.frontends.reports.safe_write import write_atomic


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


def commit_at(repo: Path, deadline: datetime) -> str:
    """The last commit of the branch whose committer date (the student's) is at or before ``deadline``."""
    return git_output(repo, "rev-list", "-1", f"--before={int(deadline.timestamp())}", "HEAD", "--") or ""


def graded_branch(repo: Path) -> str:
    """The checked-out branch, else the default branch origin's HEAD names ('' when neither)."""
    for ref in ("HEAD", "refs/remotes/origin/HEAD"):
        branch = git_output(repo, "symbolic-ref", "-q", "--short", ref)
        if branch:
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


def github_name(repo: Path) -> str:
    match = GITHUB_ORIGIN.search(git_output(repo, "config", "--get", "remote.origin.url") or "")
    return f"{match[1]}/{match[2]}" if match else ""


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
    """The commit the branch held at the deadline by GitHub's record; a later push is named with
    the date its commit claims."""
    name, branch = github_name(repo), graded_branch(repo)
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


def collected_commit(repo: Path, entry: dict | None, deadline: datetime | None) -> Pick:
    if not entry or not entry.get("commit"):
        return Pick(refusal=f"not collected: {(entry or {}).get('error', 'not in the collection')}")
    when = datetime.fromisoformat(entry["collected"])
    after = f", {(when - deadline).total_seconds():+.0f} s from the deadline" if deadline else ""
    return _local(repo, entry["commit"], f"the tip collected {describe(when)} by the instructor's clock{after}")


def choose_commit(student: str, repo: Path, deadline: datetime | None, collected: dict | None, trust: bool) -> Pick:
    if collected is not None:
        return collected_commit(repo, collected.get(student), deadline)
    if trust:
        commit = commit_at(repo, deadline)
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
        print(f"error: {into} {'exists' if into.exists() else f'is inside {repos}'}; give a new file (COLLECTED=...)",
              file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max_workers=8) as pool:  # at the deadline: every origin asked at once
        found = dict(zip(students, pool.map(collect_one, students.values())))
    write_atomic(into, json.dumps(found, indent=1, sort_keys=True) + "\n")
    for student, entry in found.items():
        print(f"{student}: {entry.get('commit', '')[:10] or entry['error']}")
    print(f"{len(found)} repositories collected into {into}; after the deadline: fetch, then "
          f"make grade-repos REPOS={repos} COLLECTED={into}")
    return 0
