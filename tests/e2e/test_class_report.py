"""Issue 27: the class report counts exactly the mistakes injected in a generated class, in
each route: nbgrader (make autograde's records), the regrade of student repositories (make
grade-repos' results.json), and Gradescope (the CLI's results.json per submission, zipped in
the layout of Gradescope's Export Submissions). A report over 40 submissions takes < 5 s."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from support import REPO
from tools import simulated_course
from tools.simulated_course import MISTAKE_IDS, release_and_solution

from autograder.chapters.ch03_attention import CHAPTER

pytestmark = pytest.mark.slow  # minutes: make check-slow (docs/maintainers.md)

STUDENTS = simulated_course.make_class(7)  # full marks, blank, stages 1-4, the three mistakes, a broken stage-2 cell
POLICY = "s07_policy1"  # stage 1 calls torch.softmax: the call policy gives it 0
STAGES = [s.number for s in CHAPTER.stages]


def _policy_notebook(release, solution) -> dict:
    notebook = STUDENTS[0].notebook(release, solution)
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "stage1_softmax_solution":
            cell["source"] = "def softmax_naive(x):\n    return torch.softmax(x, dim=-1)\n"
    return notebook


def class_notebooks() -> dict[str, dict]:
    release, solution = release_and_solution()
    return {**{s.id: s.notebook(release, solution) for s in STUDENTS}, POLICY: _policy_notebook(release, solution)}


def expected() -> dict:
    """What was injected: per stage, who attempted it, who has full marks; the named mistakes;
    the errors; the call-policy refusals."""
    stages = {n: {"attempted": 0, "not_attempted": 0, "full_marks": 0, "stopped": 0} for n in STAGES}
    mistakes, errors = Counter(), Counter()
    for s in STUDENTS:
        for n in STAGES:
            done = s.done is None or n in s.done
            stages[n]["attempted" if done else "not_attempted"] += 1
            stages[n]["full_marks"] += done and n not in (s.mistake, s.broken)
        if s.mistake:
            mistakes[(s.mistake, MISTAKE_IDS[s.mistake])] += 1
        if s.broken:
            errors[("SyntaxError", s.broken)] += 1
    for n in STAGES:  # the policy student: every stage done, stage 1 refused
        stages[n]["attempted"] += 1
        stages[n]["full_marks"] += n != 1
    return {"stages": stages, "mistakes": dict(mistakes), "errors": dict(errors), "policy": {1: 1}}


def assert_counts(report: dict, students: int = len(STUDENTS) + 1) -> None:
    want = expected()
    assert (report["students"], report["graded"], report["not_graded"]) == (students, students, [])
    got_stages = {s["number"]: {k: s[k] for k in ("attempted", "not_attempted", "full_marks", "stopped")}
                  for s in report["stages"]}
    assert got_stages == want["stages"]
    assert {(m["stage"], m["mistake"]): m["count"] for m in report["mistakes"]} == want["mistakes"]
    by_mistake = {m["mistake"]: m["students"] for m in report["mistakes"]}
    for s in STUDENTS:
        if s.mistake:
            assert by_mistake[MISTAKE_IDS[s.mistake]] in ([s.id], [])  # [] when anonymous
    assert {(e["type"], e["stage"]): e["count"] for e in report["errors"]} == want["errors"]
    assert {p["stage"]: p["count"] for p in report["policy_refusals"]} == want["policy"]
    assert report["hidden_losses"] == []


def class_report(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "autograder", "class-report", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - started


# -- the regrade of student repositories (and, from the same CLI results.json, Gradescope) -------

@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    root = tmp_path_factory.mktemp("repos-route")
    repos = root / "repos"
    for student, notebook in class_notebooks().items():
        path = CHAPTER.release_notebook(repos / student)
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(notebook))
    out = root / "grade-repos"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-repos", str(repos), "--out", str(out),
                           "--jobs", "2"], cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root, out


def test_repos_route_counts_the_injected_mistakes(regraded):
    root, out = regraded
    proc, _ = class_report(root, "--repos-out", str(out), "--out", str(root / "report"))  # FROM detected
    assert proc.returncode == 0, proc.stderr
    assert "(repos)" in proc.stdout
    assert_counts(json.loads((root / "report" / "report.json").read_text()))


def gradescope_export(path: Path, results: dict[str, Path], copies: int = 1) -> None:
    """Gradescope's Export Submissions layout: assignment_<id>_export/submission_metadata.yml
    and one submission_<id>/ folder per submission holding its files and results.json."""
    root = "assignment_4242_export/"
    metadata = ["---"]
    with zipfile.ZipFile(path, "w") as archive:
        number = 1000
        for copy in range(copies):
            for student, result in sorted(results.items()):
                number += 1
                name = student if copy == 0 else f"{student} copy {copy}"
                metadata += [f"submission_{number}:", "  :submitters:", f"  - :name: {name}",
                             f"    :sid: '{number}'", f"    :email: {number}@example.org"]
                archive.writestr(f"{root}submission_{number}/ch03_attention.ipynb", "{}")
                archive.write(result, f"{root}submission_{number}/results.json")
        archive.writestr(root + "submission_metadata.yml", "\n".join(metadata) + "\n")


def test_gradescope_route_counts_the_injected_mistakes(regraded, tmp_path):
    # make grade-repos ran `python -m autograder NOTEBOOK --results results.json` for each
    # submission: the command Gradescope's run_autograder runs (frontends/gradescope.py).
    _, out = regraded
    results = {p.parent.name: p for p in out.glob("*/results.json")}
    assert len(results) == len(STUDENTS) + 1
    export = tmp_path / "assignment_4242_export.zip"
    gradescope_export(export, results)
    proc, _ = class_report(tmp_path, "--gradescope-zip", str(export), "--out", str(tmp_path / "report"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert_counts(report)
    page = (tmp_path / "report" / "index.html").read_text()
    assert "s03_mistake1" in page and 'class="histogram"' in page and not re.search(r"https?://", page)
    proc, _ = class_report(tmp_path, "--gradescope-zip", str(export), "--out", str(tmp_path / "report"), "--anonymous")
    assert proc.returncode == 0, proc.stderr
    anonymous = (tmp_path / "report" / "index.html").read_text() + (tmp_path / "report" / "mistakes.csv").read_text()
    assert not any(s.id in anonymous for s in STUDENTS)
    assert_counts(json.loads((tmp_path / "report" / "report.json").read_text()))


def test_a_report_over_40_submissions_takes_under_5_seconds(regraded, tmp_path):
    _, out = regraded
    export = tmp_path / "forty.zip"
    gradescope_export(export, {p.parent.name: p for p in out.glob("*/results.json")}, copies=5)  # 8 x 5
    proc, seconds = class_report(tmp_path, "--gradescope-zip", str(export), "--out", str(tmp_path / "report"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "report" / "report.json").read_text())["students"] == 40
    print(f"class report over 40 submissions: {seconds:.2f} s (process start included)")
    assert seconds < 5


# -- nbgrader: make autograde's diagnosis records ---------------------------------------------

@pytest.fixture(scope="module")
def autograded(tmp_path_factory):
    course = tmp_path_factory.mktemp("nbgrader-route") / "course"
    simulated_course.new_course(course, class_notebooks())
    proc = subprocess.run([sys.executable, "-I", "-m", "autograder", "autograde", "--jobs", "2"], cwd=course,
                          env={**simulated_course.nbgrader_env(), "COLUMNS": "200"}, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return course, proc.stdout


def test_nbgrader_route_keeps_a_record_per_student_outside_the_feedback(autograded):
    course, _ = autograded
    records = sorted(p.parent.name for p in (course / "grading" / "diagnoses").glob(f"*/{CHAPTER.id}.json"))
    assert records == sorted([s.id for s in STUDENTS] + [POLICY])
    assert not list((course / "grading" / "autograded").rglob("*.json"))  # nothing nbgrader's feedback would copy
    record = json.loads((course / "grading" / "diagnoses" / "s03_mistake1" / f"{CHAPTER.id}.json").read_text())
    assert record["student"] == "s03_mistake1" and record["stages"][0]["mistake"] == MISTAKE_IDS[1]


def test_autograde_ends_with_the_most_common_mistakes_and_the_report(autograded):
    course, stdout = autograded
    assert "Most common mistakes:" in stdout
    for mistake in MISTAKE_IDS.values():
        assert f"[{mistake}]" in stdout
    assert "Class report: build/class-report/index.html" in stdout
    assert_counts(json.loads((course / "build" / "class-report" / "report.json").read_text()))


def test_nbgrader_route_counts_the_injected_mistakes(autograded):
    course, _ = autograded
    proc, _ = class_report(course, "--from", "nbgrader", "--out", "build/again")
    assert proc.returncode == 0, proc.stderr
    assert_counts(json.loads((course / "build" / "again" / "report.json").read_text()))


def test_nbgrader_route_a_missing_or_damaged_record_is_not_graded(autograded, tmp_path):
    course, _ = autograded
    copy = tmp_path / "course"
    shutil.copytree(course / "grading" / "submitted", copy / "grading" / "submitted")
    shutil.copytree(course / "grading" / "diagnoses", copy / "grading" / "diagnoses")
    (copy / "grading" / "diagnoses" / "s00_perfect" / f"{CHAPTER.id}.json").write_text('{"stages": [')
    (copy / "grading" / "diagnoses" / "s01_blank" / f"{CHAPTER.id}.json").unlink()
    proc, _ = class_report(copy, "--out", "report")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((copy / "report" / "report.json").read_text())
    reasons = {n["student"]: n["reason"] for n in report["not_graded"]}
    assert set(reasons) == {"s00_perfect", "s01_blank"}
    assert "damaged" in reasons["s00_perfect"] and "no diagnosis record" in reasons["s01_blank"]
    assert report["graded"] == len(STUDENTS) - 1
