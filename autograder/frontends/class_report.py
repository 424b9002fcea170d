"""``make class-report``: what to re-teach, from the diagnoses of a whole class.

    python -m autograder.frontends.class_report [--from nbgrader|repos|gradescope]
        [--gradescope-zip EXPORT.zip] [--anonymous] [--out build/class-report]

Reads the diagnosis records (:mod:`autograder.frontends.reports.diagnoses`) that grading left,
never regrading anything:

- ``nbgrader``: ``grading/diagnoses/<student>/<assignment>.json``, written by ``make autograde``
  (the students are those with a submission under ``grading/submitted/`` or a record);
- ``repos``: ``build/grade-repos/<student>/results.json`` and ``grades.csv``, written by
  ``make grade-repos``;
- ``gradescope``: the zip of Gradescope's "Export Submissions" (one ``submission_<id>/``
  folder per submission, each with the autograder's ``results.json``, and
  ``submission_metadata.yml`` naming the submitters).

Writes ``index.html`` (one self-contained page: the plots embedded as PNG, inline CSS, no link
out), ``report.json`` (:func:`aggregate`'s data) and ``mistakes.csv`` (one row per mistake)
under ``--out``; never in place of a file it did not write. A missing or damaged result counts
its student as not graded, with the reason.
"""

from __future__ import annotations

import argparse
import base64
import csv
import html
import io
import json
import re
import sys
import time
import zipfile
from collections import Counter, defaultdict
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
    """The input cannot give a report at all (no records anywhere): the message says why."""


@dataclass
class Submission:
    """One student's graded submission as read back: its diagnosis record, or why there is none."""

    student: str
    record: dict | None = None
    reason: str = ""  # why it is not graded (no record, a damaged one, a grading that failed)


# -- reading the records ------------------------------------------------------------------------

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
    """The class as ``make autograde`` left it: one record per student under grading/diagnoses/."""
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
    """The class as ``make grade-repos`` left it: grades.csv's rows and each <student>/results.json."""
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
    """The class from Gradescope's "Export Submissions" zip: each ``submission_<id>/`` folder
    (at any depth) with its results.json (the shallowest one of the folder), named after its
    submitters in ``submission_metadata.yml`` (the folder's name when that file is missing)."""
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
    """nbgrader when make autograde left records, else repos when make grade-repos left grades."""
    if any((root / DIAGNOSES).glob("*/*.json")):
        return "nbgrader"
    if (repos_out / "grades.csv").is_file():
        return "repos"
    raise ReportInputError(
        "no graded class found: run make autograde (nbgrader) or make grade-repos first, or give "
        "Gradescope's export: make class-report GRADESCOPE_ZIP=path/to/export.zip")


# -- the aggregation (pure) ---------------------------------------------------------------------

def aggregate(submissions: list[Submission], stages: list[dict] | None = None, *, anonymous: bool = False,
              source: str = "") -> dict:
    """The class report's data from the students' records: per stage the scores and how many
    students have full marks, attempted it, did not, were stopped by a time limit, failed it
    without a named mistake; the mistakes ranked by how many students made them; the errors
    raised (type and stage); the call-policy refusals; the hidden-example losses per check; the
    students not graded, with the reason. ``stages``: the chapter's (number, id, label, bonus,
    max_score), for the stages no record has; ``anonymous``: no student names anywhere."""
    graded = [s for s in submissions if s.record is not None]
    known: dict[int, dict] = {}
    for stage in stages or []:
        known[stage["number"]] = {k: stage[k] for k in ("number", "id", "label", "bonus", "max_score")}
    for sub in graded:
        for stage in sub.record["stages"]:
            known.setdefault(stage["number"], {"number": stage["number"], "id": stage.get("id", ""),
                                               "label": stage.get("label", f"Stage {stage['number']}"),
                                               "bonus": bool(stage.get("bonus")),
                                               "max_score": float(stage.get("max_score", 0))})
    who = (lambda names: sorted(names)) if not anonymous else (lambda names: [])
    per_stage: dict[int, dict] = {n: {**info, "scores": [], "full_marks": 0, "attempted": 0, "not_attempted": 0,
                                      "stopped": 0, "undiagnosed": 0, "stopped_students": set()}
                                  for n, info in sorted(known.items())}
    mistakes: dict[tuple, dict] = {}
    errors: dict[tuple, dict] = {}
    policy: dict[int, dict] = {}
    hidden: dict[str, dict] = {}
    totals = []
    for sub in graded:
        totals.append(float(sub.record.get("score", 0)))
        for stage in sub.record["stages"]:
            row = per_stage[stage["number"]]
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
                rank, mistake = chk.get("rank", ""), chk.get("mistake", "")
                if chk.get("hidden_failure"):
                    entry = hidden.setdefault(chk.get("check", "?"), {"check": chk.get("check", "?"),
                                                                     "stage": stage["number"], "students": set()})
                    entry["students"].add(sub.student)
                if rank == "policy":
                    entry = policy.setdefault(stage["number"], {"stage": stage["number"], "hint": chk.get("hint", ""),
                                                               "students": set()})
                    entry["students"].add(sub.student)
                    named_here = True
                elif mistake and rank in ("named", "ambiguous"):
                    named_here = True
                    entry = mistakes.setdefault((stage["number"], mistake), {
                        "stage": stage["number"], "mistake": mistake, "rank": rank, "hints": Counter(),
                        "checks": set(), "students": set()})
                    entry["hints"][chk.get("hint", "")] += 1
                    entry["checks"].add(chk.get("check", "?"))
                    entry["students"].add(sub.student)
                if chk.get("exception"):
                    entry = errors.setdefault((chk["exception"], stage["number"], "check"), {
                        "type": chk["exception"], "stage": stage["number"], "where": "while a check ran it",
                        "students": set()})
                    entry["students"].add(sub.student)
            if status in ("failed", "stopped") and not named_here:
                row["undiagnosed"] += 1
        # The first error of each attempted stage's cells: the cause (the NameErrors after it
        # follow from it); a stub's NotImplementedError is a stage not attempted, not an error.
        attempted = {st["number"] for st in sub.record["stages"] if st.get("status") != "not_implemented"}
        first: dict = {}
        for cell in sub.record.get("cell_errors", []):
            if (isinstance(cell, dict) and cell.get("type") != "NotImplementedError"
                    and (cell.get("stage") is None or cell.get("stage") in attempted)):
                first.setdefault(cell.get("stage"), cell)
        for cell in first.values():
            if isinstance(cell, dict):
                entry = errors.setdefault((str(cell.get("type", "Error")), cell.get("stage"), "cell"), {
                    "type": str(cell.get("type", "Error")), "stage": cell.get("stage"),
                    "where": "when the notebook ran", "students": set()})
                entry["students"].add(sub.student)

    def label(number) -> str:
        return known[number]["label"] if number in known else ("before the stages" if number is None else f"Stage {number}")

    ranked = sorted(mistakes.values(), key=lambda m: (-len(m["students"]), m["stage"], m["mistake"]))
    return {
        "format": REPORT_FORMAT, "source": source, "anonymous": anonymous,
        "students": len(submissions), "graded": len(graded),
        "not_graded": [{"student": "" if anonymous else s.student, "reason": s.reason}
                       for s in submissions if s.record is None],
        "totals": totals,
        "stages": [{**{k: v for k, v in row.items() if k != "stopped_students"},
                    "stopped_students": who(row["stopped_students"])} for row in per_stage.values()],
        "mistakes": [{"stage": m["stage"], "stage_label": label(m["stage"]), "mistake": m["mistake"],
                      "rank": m["rank"], "hint": m["hints"].most_common(1)[0][0], "checks": sorted(m["checks"]),
                      "count": len(m["students"]), "students": who(m["students"])} for m in ranked],
        "errors": [{"type": e["type"], "stage": e["stage"], "stage_label": label(e["stage"]), "where": e["where"],
                    "count": len(e["students"]), "students": who(e["students"])}
                   for e in sorted(errors.values(), key=lambda e: (-len(e["students"]), e["type"], str(e["stage"])))],
        "policy_refusals": [{"stage": p["stage"], "stage_label": label(p["stage"]), "hint": p["hint"],
                             "count": len(p["students"]), "students": who(p["students"])}
                            for p in sorted(policy.values(), key=lambda p: (-len(p["students"]), p["stage"]))],
        "hidden_losses": [{"check": h["check"], "stage": h["stage"], "stage_label": label(h["stage"]),
                           "count": len(h["students"]), "students": who(h["students"])}
                          for h in sorted(hidden.values(), key=lambda h: (-len(h["students"]), h["check"]))],
    }


def top_mistakes(report: dict, n: int = 3) -> list[str]:
    """The ``n`` most common mistakes, one line each (make autograde's summary)."""
    return [f"{m['count']} student{'s' if m['count'] != 1 else ''}: {m['stage_label']}: {m['hint']} [{m['mistake']}]"
            for m in report["mistakes"][:n]]


# -- rendering ----------------------------------------------------------------------------------

def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plots(report: dict) -> dict[str, str]:
    """The report's plots as base64 PNG: each stage's score histogram, and the top mistakes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    stages = report["stages"]
    if stages:
        columns = min(4, len(stages))
        rows = (len(stages) + columns - 1) // columns
        figure, axes = plt.subplots(rows, columns, figsize=(3.1 * columns, 2.3 * rows), squeeze=False)
        for ax in axes.flat[len(stages):]:
            ax.set_visible(False)
        for ax, stage in zip(axes.flat, stages):
            top = stage["max_score"] or 1.0
            ax.hist(stage["scores"], bins=[top * i / 10 for i in range(11)], color="#0969da", edgecolor="white")
            ax.set_title(f"{stage['label']}{' (bonus)' if stage['bonus'] else ''}", fontsize=9)
            ax.set_xlim(0, top)
            ax.set_xlabel("points", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.yaxis.get_major_locator().set_params(integer=True)
        figure.tight_layout()
        images["stages"] = _png(figure)
        plt.close(figure)
    if report["mistakes"]:
        shown = report["mistakes"][:10][::-1]
        figure, ax = plt.subplots(figsize=(7.5, 0.35 * len(shown) + 0.8))
        ax.barh([f"{m['stage_label'].split(' (')[0]}: {m['mistake'][:40]}" for m in shown],
                [m["count"] for m in shown], color="#cf222e")
        ax.set_xlabel("students", fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
        figure.tight_layout()
        images["mistakes"] = _png(figure)
        plt.close(figure)
    return images


CSS = """body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:72em;color:#1f2328;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;width:100%}
th,td{border:1px solid #d0d7de;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;white-space:nowrap}.muted{color:#656d76}
code{background:#f6f8fa;padding:0 .25em;border-radius:3px}
img{max-width:100%}.lead{font-size:1.05em}"""


def _cell(value) -> str:
    return html.escape(str(value))


def _names(students: list[str]) -> str:
    return _cell(", ".join(students)) if students else '<span class="muted">(names left out)</span>'


def render_html(report: dict, images: dict[str, str]) -> str:
    anonymous = report["anonymous"]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', GENERATOR,
           "<title>Class report: what to re-teach</title>", f"<style>{CSS}</style></head><body>",
           "<h1>Class report: what to re-teach</h1>",
           f'<p class="lead">{report["graded"]} of {report["students"]} submissions graded'
           + (f" (from {_cell(report['source'])})" if report["source"] else "") + ". "
           + ("Anonymous: no student names. " if anonymous else "")
           + "Mistakes are counted once per student, from the diagnosis each check made.</p>"]
    out.append("<h2>The diagnosed mistakes, most common first</h2>")
    if report["mistakes"]:
        if "mistakes" in images:
            out.append(f'<img alt="the most common mistakes" src="data:image/png;base64,{images["mistakes"]}">')
        out.append("<table><tr><th>students</th><th>stage</th><th>mistake (the hint students read)</th>"
                   "<th>checks</th>" + ("" if anonymous else "<th>who</th>") + "</tr>")
        for m in report["mistakes"]:
            out.append(f'<tr><td class="n">{m["count"]}</td><td>{_cell(m["stage_label"])}</td>'
                       f'<td>{_cell(m["hint"])}<br><span class="muted"><code>{_cell(m["mistake"])}</code>'
                       f'{" (one of these)" if m["rank"] == "ambiguous" else ""}</span></td>'
                       f'<td>{_cell(", ".join(m["checks"]))}</td>' + ("" if anonymous else f"<td>{_names(m['students'])}</td>")
                       + "</tr>")
        out.append("</table>")
    else:
        out.append('<p class="muted">No named mistake in this class.</p>')
    out.append("<h2>Per stage</h2>")
    if "stages" in images:
        out.append(f'<img alt="score distribution per stage" src="data:image/png;base64,{images["stages"]}">')
    out.append("<table><tr><th>stage</th><th>full marks</th><th>attempted</th><th>not attempted</th>"
               "<th>stopped by a time limit</th><th>failed, no named mistake</th><th>mean points</th></tr>")
    for s in report["stages"]:
        mean = sum(s["scores"]) / len(s["scores"]) if s["scores"] else 0.0
        out.append(f'<tr><td>{_cell(s["label"])}{" (bonus)" if s["bonus"] else ""}</td><td class="n">{s["full_marks"]}</td>'
                   f'<td class="n">{s["attempted"]}</td><td class="n">{s["not_attempted"]}</td>'
                   f'<td class="n">{s["stopped"]}</td><td class="n">{s["undiagnosed"]}</td>'
                   f'<td class="n">{mean:.1f} / {s["max_score"]:g}</td></tr>')
    out.append("</table>")
    sections = [
        ("Errors raised", report["errors"], ["students", "error", "stage", "where"],
         lambda e: [e["count"], e["type"], e["stage_label"], e["where"]]),
        ("Call-policy refusals (a stage that calls what it teaches earns 0)", report["policy_refusals"],
         ["students", "stage", "message"], lambda p: [p["count"], p["stage_label"], p["hint"]]),
        ("Lost on the hidden examples (passed the visible ones)", report["hidden_losses"],
         ["students", "check", "stage"], lambda h: [h["count"], h["check"], h["stage_label"]]),
    ]
    for title, rows, heads, cells in sections:
        out.append(f"<h2>{_cell(title)}</h2>")
        if not rows:
            out.append('<p class="muted">None.</p>')
            continue
        out.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in heads) + ("" if anonymous else "<th>who</th>") + "</tr>")
        for row in rows:
            values = cells(row)
            out.append(f'<tr><td class="n">{values[0]}</td>' + "".join(f"<td>{_cell(v)}</td>" for v in values[1:])
                       + ("" if anonymous else f"<td>{_names(row['students'])}</td>") + "</tr>")
        out.append("</table>")
    out.append("<h2>Not graded</h2>")
    if report["not_graded"]:
        out.append("<table><tr>" + ("" if anonymous else "<th>student</th>") + "<th>reason</th></tr>")
        for n in report["not_graded"]:
            out.append("<tr>" + ("" if anonymous else f"<td>{_cell(n['student'])}</td>") + f"<td>{_cell(n['reason'])}</td></tr>")
        out.append("</table>")
    else:
        out.append('<p class="muted">Every submission was graded.</p>')
    out.append("</body></html>")
    return "\n".join(out)


def mistakes_csv(report: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for m in report["mistakes"]:
        writer.writerow([m["stage"], m["mistake"], m["rank"], m["hint"], " ".join(m["checks"]), m["count"],
                         "; ".join(m["students"])])
    return buffer.getvalue()


def _ours(name: str):
    if name == "index.html":
        return lambda data: GENERATOR.encode() in data[:2000]
    if name == "report.json":
        def is_report(data: bytes) -> bool:
            try:
                return json.loads(data).get("format") == REPORT_FORMAT
            except (ValueError, AttributeError):
                return False
        return is_report
    return lambda data: data.startswith(",".join(CSV_HEADER).encode())


def write_report(submissions: list[Submission], out: Path, *, stages: list[dict] | None = None,
                 anonymous: bool = False, source: str = "") -> dict:
    """The report's three files under ``out``; refused (OutputRefused) where any of them would
    replace a file this command did not write. Returns the report's data."""
    from autograder.frontends.reports.safe_write import OutputRefused, overwrite_refusal, write_json

    if out.exists() and not out.is_dir():
        raise OutputRefused(f"--out {out}: that is a file; give a folder")
    for name in FILES:
        why = overwrite_refusal(out / name, "--out", _ours(name))
        if why:
            raise OutputRefused(why)
    report = aggregate(submissions, stages, anonymous=anonymous, source=source)
    page = render_html(report, plots(report))
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "report.json", report)
    for name, text in (("index.html", page), ("mistakes.csv", mistakes_csv(report))):
        partial = out / f".{name}.partial"
        partial.write_text(text, encoding="utf-8")
        partial.replace(out / name)
    return report


def load_source(source: str, *, root: Path = Path("."), repos_out: Path = REPOS_OUT, zip_path: Path | None = None,
                assignment: str | None = None) -> list[Submission]:
    if source == "gradescope":
        if zip_path is None:
            raise ReportInputError("--from gradescope needs the export: --gradescope-zip path/to/export.zip")
        return load_gradescope_zip(zip_path)
    if source == "repos":
        if not (repos_out / "grades.csv").is_file() and not any(repos_out.glob("*/results.json")):
            raise ReportInputError(f"{repos_out} holds no grades: run make grade-repos REPOS=... first")
        return load_repos(repos_out)
    return load_nbgrader(root, assignment)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.frontends.class_report",
                                     description="The class's diagnosed mistakes, from grading already done.")
    parser.add_argument("--from", dest="source", choices=("nbgrader", "repos", "gradescope"), default=None,
                        help="where the grades are (default: --gradescope-zip if given, else nbgrader's "
                             "grading/diagnoses, else make grade-repos' folder)")
    parser.add_argument("--gradescope-zip", type=Path, default=None, metavar="ZIP",
                        help="Gradescope's Export Submissions zip")
    parser.add_argument("--repos-out", type=Path, default=REPOS_OUT, metavar="DIR",
                        help=f"make grade-repos' output folder (default {REPOS_OUT})")
    parser.add_argument("--anonymous", action="store_true", help="leave every student name out (to show the class)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the report goes (default {DEFAULT_OUT})")
    parser.add_argument("--chapter", default=None, metavar="ID",
                        help="the assignment (chapter) id of nbgrader's records (default: the registry's)")
    args = parser.parse_args(argv)
    # Reading records only: no chapter is imported (that would import torch), nothing is graded.
    from autograder.frontends.reports.safe_write import OutputRefused

    started = time.monotonic()
    try:
        source = args.source or ("gradescope" if args.gradescope_zip else detect_source(Path("."), args.repos_out))
        submissions = load_source(source, repos_out=args.repos_out, zip_path=args.gradescope_zip,
                                  assignment=args.chapter)
        if not submissions:
            raise ReportInputError(f"no submissions found ({source})")
        report = write_report(submissions, args.out, anonymous=args.anonymous, source=source)
    except (ReportInputError, OutputRefused) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    print(f"{report['graded']}/{report['students']} submissions graded ({source}); "
          f"{len(report['mistakes'])} distinct mistakes diagnosed.")
    for line in top_mistakes(report):
        print(f"  {line}")
    for n in report["not_graded"]:
        print(f"  not graded: {n['student'] + ': ' if n['student'] else ''}{n['reason']}")
    print(f"{args.out / 'index.html'} (and report.json, mistakes.csv) in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
