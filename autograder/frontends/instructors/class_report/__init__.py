"""``make class-report``: what to re-teach, from the diagnosis records a class's grading left, never
regrading anything; a missing or damaged record is a student not graded, with the reason."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import re
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.chapters import DEFAULT
from autograder.frontends.commands import Refused
from autograder.frontends.instructors.class_report.render import CSV_HEADER, GENERATOR, mistakes_csv, render_html
from autograder.frontends.reports.diagnoses import DIAGNOSES

REPORT_FORMAT = "autograder-class-report/1"
DEFAULT_OUT = Path("build") / "class-report"
REPOS_OUT = Path("build") / "grade-repos"


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


def load_nbgrader(root: Path, assignment: str) -> list[Submission]:
    diagnoses = root / DIAGNOSES
    students = {p.parent.name for p in (root / "grading" / "submitted").glob(f"*/{assignment}") if p.is_dir()}
    students |= {p.parent.name for p in diagnoses.glob(f"*/{assignment}.json")}
    found = []
    for student in sorted(students):
        path = diagnoses / student / f"{assignment}.json"
        data, why = read_json_file(path)
        if why.startswith("no "):
            why = "not graded: no diagnosis record (make autograde has not graded this submission)"
        found.append(Submission(student, *((None, why) if why else checked_record(data, path.name))))
    return found


def load_repos(out: Path = REPOS_OUT) -> list[Submission]:
    reasons: dict[str, str] = {}
    with contextlib.suppress(OSError, csv.Error, UnicodeDecodeError), (out / "grades.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("student"):
                reasons[row["student"]] = row.get("reason") or ""
    students = set(reasons) | {p.parent.name for p in out.glob("*/results.json")}
    found = []
    for student in sorted(students):
        data, why = read_json_file(out / student / "results.json")
        if why:
            found.append(Submission(student, reason=f"not graded: {reasons[student]}" if reasons.get(student) else why))
        else:
            found.append(Submission(student, *record_from_results(data, f"{student}/results.json")))
    return found


SUBMISSION_FOLDER = re.compile(r"submission_\d+")


def _submitters(metadata: str) -> dict[str, str]:
    """submission_<id> -> the submitters' names, from Gradescope's submission_metadata.yml."""
    import yaml

    try:
        data = yaml.safe_load(metadata)
    except yaml.YAMLError:
        data = None
    names: dict[str, str] = {}
    for key, entry in data.items() if isinstance(data, dict) else ():
        people = entry.get(":submitters", entry.get("submitters", [])) if isinstance(entry, dict) else []
        shown = [str(p.get(":name") or p.get("name") or p.get(":sid") or "") for p in people if isinstance(p, dict)]
        if any(shown):
            names[str(key)] = " & ".join(n for n in shown if n)
    return names


def load_gradescope_zip(path: Path) -> list[Submission]:
    """Gradescope's "Export Submissions" zip: each ``submission_<id>/`` folder's results.json, named
    after its submitters in ``submission_metadata.yml``."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise Refused(f"{path}: not a readable zip ({exc})") from None
    with archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
        folders: dict[str, list[str]] = defaultdict(list)  # submission folder -> its results.json files
        metadata = ""
        for name in names:
            parts = PurePosixPath(name).parts
            if parts[-1] == "submission_metadata.yml" and not metadata:
                metadata = archive.read(name).decode("utf-8", "replace")
            where = next((i for i, p in enumerate(parts[:-1]) if SUBMISSION_FOLDER.fullmatch(p)), None)
            if where is not None:  # every submission folder, whether it holds a results.json or not
                folders["/".join(parts[:where + 1])] += [name] if parts[-1] == "results.json" else []
        if not any(folders.values()):
            raise Refused(
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
            found.append(Submission(student, *record_from_results(data, f"{key}/results.json")))
    return found


def detect_source(root: Path = Path("."), repos_out: Path = REPOS_OUT) -> str:
    if any((root / DIAGNOSES).glob("*/*.json")):
        return "nbgrader"
    if (repos_out / "grades.csv").is_file():
        return "repos"
    raise Refused(
        "no graded class found: run make autograde (nbgrader) or make grade-repos first, or give "
        "Gradescope's export: make class-report GRADESCOPE_ZIP=path/to/export.zip")


def aggregate(submissions: list[Submission], *, anonymous: bool = False, source: str = "") -> dict:
    """The report's data; ``anonymous``: no names."""
    graded = [s for s in submissions if s.record is not None]
    per_stage: dict[int, dict] = {}
    who = (lambda names: sorted(names)) if not anonymous else (lambda names: [])
    mistakes: dict[tuple, dict] = {}
    errors: dict[tuple, dict] = {}
    policy: dict[int, dict] = {}
    hidden: dict[str, dict] = {}

    def count(table: dict, key, student: str, **entry) -> dict:
        table.setdefault(key, {**entry, "students": set()})["students"].add(student)
        return table[key]

    for sub in graded:
        for stage in sub.record["stages"]:
            number = stage["number"]
            row = per_stage.setdefault(number, {
                "number": number, "id": stage.get("id", ""), "label": stage.get("label", f"Stage {number}"),
                "bonus": bool(stage.get("bonus")), "max_score": float(stage.get("max_score", 0)), "scores": [],
                "full_marks": 0, "attempted": 0, "not_attempted": 0, "stopped": 0, "undiagnosed": 0, "stopped_students": set()})
            status = stage.get("status", "")
            row["scores"].append(float(stage["score"]))
            if status == "not_implemented":
                row["not_attempted"] += 1
                continue
            row["attempted"] += 1
            if float(stage["score"]) >= float(stage.get("max_score", 0)) and status == "passed":
                row["full_marks"] += 1
            if status == "stopped":
                row["stopped"] += 1
                row["stopped_students"].add(sub.student)
            named_here = False
            for chk in stage.get("checks", []):
                if not isinstance(chk, dict):
                    continue
                rank, mistake, check = chk.get("rank", ""), chk.get("mistake", ""), chk.get("check", "?")
                if chk.get("hidden_failure"):
                    count(hidden, check, sub.student, check=check, stage=number)
                if rank == "policy":
                    count(policy, number, sub.student, stage=number, hint=chk.get("hint", ""))
                    named_here = True
                elif mistake and rank in ("named", "ambiguous"):
                    named_here = True
                    entry = count(mistakes, (number, mistake), sub.student, stage=number, mistake=mistake, rank=rank,
                                  hints=Counter(), checks=set())
                    entry["hints"][chk.get("hint", "")] += 1
                    entry["checks"].add(check)
                if chk.get("exception"):
                    count(errors, (chk["exception"], number, "check"), sub.student, type=chk["exception"], stage=number,
                          where="while a check ran it")
            if status in ("failed", "stopped") and not named_here:
                row["undiagnosed"] += 1
        # the first error of each attempted stage's cells is the cause (NameErrors follow from it)
        attempted = {st["number"] for st in sub.record["stages"] if st.get("status") != "not_implemented"}
        first: dict = {}
        for cell in sub.record.get("cell_errors", []):
            if (isinstance(cell, dict) and cell.get("type") != "NotImplementedError"
                    and (cell.get("stage") is None or cell.get("stage") in attempted)):
                first.setdefault(cell.get("stage"), cell)
        for cell in first.values():
            kind = str(cell.get("type", "Error"))
            count(errors, (kind, cell.get("stage"), "cell"), sub.student, type=kind, stage=cell.get("stage"),
                  where="when the notebook ran")
    per_stage = dict(sorted(per_stage.items()))

    def label(number) -> str:
        return per_stage[number]["label"] if number in per_stage else ("before the stages" if number is None else f"Stage {number}")

    def listed(table: dict, order, **fields) -> list[dict]:
        return [{**{k: v for k, v in e.items() if k not in ("students", "hints")}, "stage_label": label(e["stage"]),
                 **{k: f(e) for k, f in fields.items()}, "count": len(e["students"]), "students": who(e["students"])}
                for e in sorted(table.values(), key=lambda e: (-len(e["students"]), *order(e)))]

    return {
        "format": REPORT_FORMAT, "source": source, "anonymous": anonymous,
        "students": len(submissions), "graded": len(graded),
        "not_graded": [{"student": "" if anonymous else s.student, "reason": s.reason}
                       for s in submissions if s.record is None],
        "totals": [float(sub.record.get("score", 0)) for sub in graded],
        "stages": [{**{k: v for k, v in row.items() if k != "stopped_students"},
                    "stopped_students": who(row["stopped_students"])} for row in per_stage.values()],
        "mistakes": listed(mistakes, lambda m: (m["stage"], m["mistake"]),
                           hint=lambda m: m["hints"].most_common(1)[0][0], checks=lambda m: sorted(m["checks"])),
        "errors": listed(errors, lambda e: (e["type"], str(e["stage"]))),
        "policy_refusals": listed(policy, lambda p: (p["stage"],)),
        "hidden_losses": listed(hidden, lambda h: (h["check"],)),
    }


def top_mistakes(report: dict, n: int = 3) -> list[str]:
    return [f"{m['count']} student{'s' if m['count'] != 1 else ''}: {m['stage_label']}: {m['hint']} [{m['mistake']}]"
            for m in report["mistakes"][:n]]


# Each file the report writes, and how to tell an earlier report's copy (the only kind replaced).
OURS = {"index.html": lambda data: GENERATOR.encode() in data[:2000],
        "report.json": lambda data: REPORT_FORMAT.encode() in data[:200],
        "mistakes.csv": lambda data: data.startswith(",".join(CSV_HEADER).encode())}


def write_report(submissions: list[Submission], out: Path, *, anonymous: bool = False, source: str = "") -> dict:
    """The report's three files under ``out`` (OutputRefused over a file it did not write); its data."""
    from autograder.frontends.reports.safe_write import OutputRefused, overwrite_refusal, write_atomic, write_json

    if out.exists() and not out.is_dir():
        raise OutputRefused(f"--out {out}: that is a file; give a folder")
    for name, ours in OURS.items():
        if why := overwrite_refusal(out / name, "--out", ours):
            raise OutputRefused(why)
    report = aggregate(submissions, anonymous=anonymous, source=source)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "report.json", report)
    write_atomic(out / "index.html", render_html(report))
    write_atomic(out / "mistakes.csv", mistakes_csv(report))
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", choices=("nbgrader", "repos", "gradescope"), default=None,
                        help="where the grades are (default: --gradescope-zip if given, else nbgrader's "
                             "grading/diagnoses, else make grade-repos' folder)")
    parser.add_argument("--gradescope-zip", type=Path, default=None, metavar="ZIP",
                        help="Gradescope's Export Submissions zip")
    parser.add_argument("--repos-out", type=Path, default=REPOS_OUT, metavar="DIR",
                        help=f"make grade-repos' output folder (default {REPOS_OUT})")
    parser.add_argument("--anonymous", action="store_true", help="leave every student name out (to show the class)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the report goes (default {DEFAULT_OUT})")
    parser.add_argument("--chapter", default=DEFAULT, metavar="ID",
                        help="the assignment (chapter) id of nbgrader's records (default: the registry's)")


def run(args: argparse.Namespace) -> int:
    # records only: no chapter is imported (that would import torch)
    started = time.monotonic()
    source = args.source or ("gradescope" if args.gradescope_zip else detect_source(Path("."), args.repos_out))
    if source == "gradescope" and args.gradescope_zip is None:
        raise Refused("--from gradescope needs the export: --gradescope-zip path/to/export.zip")
    submissions = (load_gradescope_zip(args.gradescope_zip) if source == "gradescope" else
                   load_repos(args.repos_out) if source == "repos" else load_nbgrader(Path("."), args.chapter))
    if not submissions:
        raise Refused(f"no submissions found ({source}): run make autograde or make grade-repos REPOS=... first")
    report = write_report(submissions, args.out, anonymous=args.anonymous, source=source)
    print(f"{report['graded']}/{report['students']} submissions graded ({source}); "
          f"{len(report['mistakes'])} distinct mistakes diagnosed.")
    for line in top_mistakes(report):
        print(f"  {line}")
    for n in report["not_graded"]:
        print(f"  not graded: {n['student'] + ': ' if n['student'] else ''}{n['reason']}")
    print(f"{args.out / 'index.html'} (and report.json, mistakes.csv) in {time.monotonic() - started:.1f} s")
    return 0

