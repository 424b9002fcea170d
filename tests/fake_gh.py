"""A stand-in for the GitHub CLI on PATH: the calls `make grade-repos DEADLINE=` makes, answered
from a JSON file in the shapes GitHub's REST API documents, with no network.

- ``gh auth status --hostname github.com``: logged in (exit 0), or, with FAKE_GH_LOGGED_OUT=1,
  gh's "not logged in" (exit 1);
- ``gh api --paginate repos/OWNER/NAME/activity?ref=refs%2Fheads%2FBRANCH&per_page=N``: "List
  repository activities" (GET /repos/{owner}/{repo}/activity): the activities the record holds
  for that repository and ref, newest first (the API's default direction), N to a page (at most
  100, else GitHub's 422), each page one JSON array as gh before 2.48 prints them; a repository
  the record does not hold is gh's 404.

Any other call exits 2 naming its arguments, so a wrong endpoint or query fails the test that
made it. The record (FAKE_GH_RECORD, a JSON file) maps ``owner/name`` to its activities; each
call is appended to FAKE_GH_RECORD + ".calls".
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit


def push(before: str, after: str, timestamp: str, branch: str = "main", kind: str = "push") -> dict:
    """One activity as the API lists it."""
    return {"id": int(after[:7], 16), "node_id": "RA_kwDOfake", "before": before, "after": after,
            "ref": f"refs/heads/{branch}", "timestamp": timestamp, "activity_type": kind,
            "actor": {"login": "a-student", "id": 1, "type": "User"}}


def install(folder: Path, record: dict[str, list[dict]], logged_in: bool = True) -> dict[str, str]:
    """``gh`` written into ``folder``; the environment that puts it first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "record.json").write_text(json.dumps(record))
    gh = folder / "gh"
    gh.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).resolve()))} \"$@\"\n")
    gh.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "FAKE_GH_RECORD": str(folder / "record.json"),
            "FAKE_GH_LOGGED_OUT": "" if logged_in else "1"}


def calls(env: dict[str, str]) -> list[list[str]]:
    path = Path(env["FAKE_GH_RECORD"] + ".calls")
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def main(argv: list[str]) -> int:
    record_file = os.environ["FAKE_GH_RECORD"]
    with open(record_file + ".calls", "a") as log:
        log.write(json.dumps(argv) + "\n")
    if argv == ["auth", "status", "--hostname", "github.com"]:
        if os.environ.get("FAKE_GH_LOGGED_OUT"):
            print("You are not logged into any GitHub hosts. To log in, run: gh auth login", file=sys.stderr)
            return 1
        print("github.com\n  ✓ Logged in to github.com account an-instructor (keyring)")
        return 0
    if len(argv) == 3 and argv[:2] == ["api", "--paginate"]:
        url = urlsplit(argv[2])
        path, query = url.path.split("/"), parse_qs(url.query, strict_parsing=True)
        if len(path) == 4 and path[0] == "repos" and path[3] == "activity" and set(query) == {"ref", "per_page"}:
            name, ref, per_page = f"{path[1]}/{path[2]}", query["ref"][0], int(query["per_page"][0])
            ref = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
            record = json.loads(Path(record_file).read_text())
            if name not in record:
                print("gh: Not Found (HTTP 404)", file=sys.stderr)
                return 1
            if not 1 <= per_page <= 100:
                print("gh: Validation Failed (HTTP 422)", file=sys.stderr)
                return 1
            found = sorted((a for a in record[name] if a["ref"] == ref), key=lambda a: a["timestamp"], reverse=True)
            for start in range(0, max(len(found), 1), per_page):
                print(json.dumps(found[start:start + per_page], indent=2))
            return 0
    print(f"fake gh: unexpected arguments {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
