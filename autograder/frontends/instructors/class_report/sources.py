"""The diagnosis records grading left, per route; a missing or damaged one is a student not graded."""

from __future__ import annotations

import csv
import json
import re
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.frontends.reports.diagnoses import DIAGNOSES

REPORT_FORMAT = "autograder-class-report/1"
DEFAULT_OUT = Path("build") / "class-report"
GRADING = Path("grading")
REPOS_OUT = Path("build") / "grade-repos"
GENERATOR = '<meta name="generator" content="autograder class-report">'
CSV_HEADER = ["stage", "mistake", "rank", "hint", "checks", "count", "students"]
FILES = ("index.html", "report.json", "mistakes.csv")


class ReportInputError(Exception):
    """No records anywhere: the message says why."""


@dataclass
class Submission:
    """One student's diagnosis record, or why there is none."""

    student: str
    record: dict | None = None
    reason: str = ""  # why it is not graded (no record, a damaged one, a grading that failed)


def checked_record(data, where: str) -> tuple[dict | None, str]:
    """A diagnosis record that the report can count, or None and why not."""
    if not isinstance(data, dict) or not isinstance(data.get("stages"), list):
        return None, f"{where}: not a diagnosis record"
    if data.get("error"):
        return None, f"not graded: {data['error']}"
    for stage in data["stages"]:
        if not (isinstance(stage, dict) and isinstance(stage.get("number"), int)
                and isinstance(stage.get("score"), (int, float)) and isinstance(stage.get("checks", []), list)):
            return None, f"{where}: a damaged stage entry in the diagnosis record"
    return data, ""


def record_from_results(data, where: str) -> tuple[dict | None, str]:
    """The diagnosis record a results.json carries (``extra_data.diagnosis``)."""
    if not isinstance(data, dict) or "tests" not in data:
        return None, f"{where} is not a results.json"
    diagnosis = (data.get("extra_data") or {}).get("diagnosis") if isinstance(data.get("extra_data"), dict) else None
    if diagnosis is None:
        output = str(data.get("output", ""))
        if output.startswith("Could not grade"):
            return None, f"not graded: {output.splitlines()[0][len('Could not grade: '):]}"
        return None, f"{where} holds no diagnosis (written by an older grader: grade again)"
    return checked_record(diagnosis, where)


def read_json_file(path: Path) -> tuple[object, str]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except FileNotFoundError:
        return None, f"no {path.name}"
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, f"{path.name} is damaged ({type(exc).__name__}: {str(exc)[:120]})"


def load_nbgrader(root: Path = Path("."), assignment: str | None = None) -> list[Submission]:
    from autograder.chapters import DEFAULT

    assignment = assignment or DEFAULT
    diagnoses = root / DIAGNOSES
    students = {p.parent.name for p in (root / GRADING / "submitted").glob(f"*/{assignment}") if p.is_dir()}
    students |= {p.parent.name for p in diagnoses.glob(f"*/{assignment}.json")}
    found = []
    for student in sorted(students):
        path = diagnoses / student / f"{assignment}.json"
        data, why = read_json_file(path)
        if why.startswith("no "):
            found.append(Submission(student, reason="not graded: no diagnosis record (make autograde has not "
                                                    "graded this submission)"))
            continue
        record, why = (None, why) if why else checked_record(data, path.name)
        found.append(Submission(student, record, why))
    return found


def load_repos(out: Path = REPOS_OUT) -> list[Submission]:
    reasons: dict[str, str] = {}
    try:
        with (out / "grades.csv").open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if row.get("student"):
                    reasons[row["student"]] = row.get("reason") or ""
    except (OSError, csv.Error, UnicodeDecodeError):
        pass
    students = set(reasons) | {p.parent.name for p in out.glob("*/results.json")}
    found = []
    for student in sorted(students):
        data, why = read_json_file(out / student / "results.json")
        if why:
            why = f"not graded: {reasons[student]}" if reasons.get(student) else why
            found.append(Submission(student, reason=why))
            continue
        record, why = record_from_results(data, f"{student}/results.json")
        found.append(Submission(student, record, why))
    return found


SUBMISSION_FOLDER = re.compile(r"submission_\d+")


def _submitters(metadata: str) -> dict[str, str]:
    """submission_<id> -> the submitters' names, from Gradescope's submission_metadata.yml."""
    try:
        import yaml

        data = yaml.safe_load(metadata)
    except Exception:
        data = None
    names: dict[str, str] = {}
    if isinstance(data, dict):
        for key, entry in data.items():
            people = entry.get(":submitters", entry.get("submitters", [])) if isinstance(entry, dict) else []
            shown = [str(p.get(":name") or p.get("name") or p.get(":sid") or "") for p in people if isinstance(p, dict)]
            if any(shown):
                names[str(key)] = " & ".join(n for n in shown if n)
        return names
    current = None  # without PyYAML: "submission_123:" then ":name: Ada Lovelace" lines
    for line in metadata.splitlines():
        folder = re.match(r"^(submission_\d+):\s*$", line)
        if folder:
            current = folder.group(1)
        name = re.match(r"^\s+-?\s*:name:\s*(.+?)\s*$", line)
        if name and current:
            names[current] = f"{names[current]} & {name.group(1)}" if current in names else name.group(1).strip("'\"")
    return names


def load_gradescope_zip(path: Path) -> list[Submission]:
    """Gradescope's "Export Submissions" zip: each ``submission_<id>/`` folder's results.json, named
    after its submitters in ``submission_metadata.yml``."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ReportInputError(f"{path}: not a readable zip ({exc})") from None
    with archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
        folders: dict[str, list[str]] = defaultdict(list)  # submission folder -> its results.json files
        metadata = ""
        for name in names:
            parts = PurePosixPath(name).parts
            if parts[-1] == "submission_metadata.yml" and not metadata:
                metadata = archive.read(name).decode("utf-8", "replace")
            where = next((i for i, p in enumerate(parts[:-1]) if SUBMISSION_FOLDER.fullmatch(p)), None)
            if where is None:
                continue
            folder = "/".join(parts[:where + 1])
            folders.setdefault(folder, [])
            if parts[-1] == "results.json":
                folders[folder].append(name)
        if not any(folders.values()):
            raise ReportInputError(
                f"{path} holds no results.json: give the zip of Export Submissions (the assignment's "
                "Review Grades page) taken once the autograder has run, not the grades spreadsheet")
        people = _submitters(metadata)
        found = []
        for folder, results in sorted(folders.items()):
            key = PurePosixPath(folder).name
            student = people.get(key, key)
            if not results:
                found.append(Submission(student, reason="not graded: no results.json in its folder of the export"))
                continue
            shallowest = min(results, key=lambda n: (len(PurePosixPath(n).parts), n))
            try:
                data = json.loads(archive.read(shallowest).decode("utf-8"))
            except (ValueError, UnicodeDecodeError, zipfile.BadZipFile, OSError) as exc:
                found.append(Submission(student, reason=f"results.json is damaged ({type(exc).__name__})"))
                continue
            record, why = record_from_results(data, f"{key}/results.json")
            found.append(Submission(student, record, why))
    return found


def detect_source(root: Path = Path("."), repos_out: Path = REPOS_OUT) -> str:
    if any((root / DIAGNOSES).glob("*/*.json")):
        return "nbgrader"
    if (repos_out / "grades.csv").is_file():
        return "repos"
    raise ReportInputError(
        "no graded class found: run make autograde (nbgrader) or make grade-repos first, or give "
        "Gradescope's export: make class-report GRADESCOPE_ZIP=path/to/export.zip")
