"""Issue 25: ``make demo``, an instructor's first command, in a temporary course copy.

One run (the module's fixture): the printed paths exist, nbgrader's CSV has each simulated
student with the expected total (full marks 100, blank 0, the late one penalised per
nbgrader_config.py's LatePenalty), the renamed notebook is graded, and the repositories' CSV
agrees. A folder the demo did not make is refused and left as it was.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import REPO, late_penalty, link_venv

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends.instructors.nbgrader.stages import csv_column

GRADED = [s for s in CHAPTER.stages if not s.bonus]
BONUS_MAX = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)
TOTAL = CHAPTER.max_score


def course_copy(root: Path) -> Path:
    """The course's top-level files, sources and tests/tools (the demo) in ``root``, with this
    test's venv as .venv and a stamp that tells make the venv is installed."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("Makefile", "students.mk", "nbgrader_config.py", "pyproject.toml", "constraints.txt"):
        (root / name).write_bytes((REPO / name).read_bytes())
    for folder in ("solutions", "assignments", "tests/tools"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    (root / ".stamp").touch()
    link_venv(root)
    return root


def make(course: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args, f"STAMP={course / '.stamp'}"], cwd=course,
                          capture_output=True, text=True, timeout=timeout,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")} | {"COLUMNS": "160"})


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    course = course_copy(tmp_path_factory.mktemp("demo") / "course")
    started = time.monotonic()
    proc = make(course, "demo", "JOBS=2")
    seconds = time.monotonic() - started
    print(f"\nmake demo: {seconds:.0f} s\n{proc.stdout}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return course, proc.stdout


def _printed(course: Path, out: str, label: str) -> Path:
    match = re.search(rf"^  {re.escape(label)}: (\S+)$", out, re.M)
    assert match, out
    return course / match.group(1)


@pytest.mark.slow
def test_the_printed_results_exist(demo):
    course, out = demo
    feedback = _printed(course, out, "feedback (HTML, one page per student)")
    assert feedback.is_dir() and (feedback / "full_marks" / CHAPTER.id / f"{CHAPTER.id}.html").is_file()
    assert _printed(course, out, "nbgrader's grades (CSV)").is_file()
    assert _printed(course, out, "the repositories' grades (CSV)").is_file()
    assert (course / "build" / "demo" / ".made-by-make-demo").is_file()
    assert not (course / "grading").exists()  # the course's own grading/ is never used
    assert " NO" not in out and "Traceback" not in out


@pytest.mark.slow
def test_nbgrader_grades_each_student_as_expected(demo):
    course, out = demo
    with open(_printed(course, out, "nbgrader's grades (CSV)"), newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"full_marks", "blank", "partly_done", "mistakes", "renamed", "late"}
    total = {s: sum(float(r[csv_column(stage)]) for stage in GRADED) for s, r in rows.items()}
    assert total["full_marks"] == TOTAL and float(rows["full_marks"]["extra_credit"]) == BONUS_MAX
    assert total["blank"] == 0 and rows["blank"]["score"] == "0"
    assert total["partly_done"] == sum(CHAPTER.points(s) for s in GRADED if s.number <= 4)
    assert 0.6 * TOTAL <= total["mistakes"] < TOTAL
    assert total["renamed"] == TOTAL and "renamed notebook" in rows["renamed"]["warnings"]
    # 36 hours late: two days started, at nbgrader_config.py's LatePenalty.per_day each
    penalty = late_penalty(TOTAL, 2)
    late = rows["late"]
    assert (late["raw_score"], late["late_submission_penalty"], late["score"]) == (f"{TOTAL:g}", f"{penalty:g}", f"{TOTAL - penalty:g}")
    assert rows["full_marks"]["late_submission_penalty"] == "0"


@pytest.mark.slow
def test_the_repositories_regrade_agrees(demo):
    course, out = demo
    with open(_printed(course, out, "nbgrader's grades (CSV)"), newline="") as handle:
        nbgrader = {r["student_id"]: sum(float(r[csv_column(s)]) for s in GRADED) for r in csv.DictReader(handle)}
    with open(_printed(course, out, "the repositories' grades (CSV)"), newline="") as handle:
        repos = {r["student"]: r for r in csv.DictReader(handle)}
    assert {s: float(r["total"]) for s, r in repos.items()} == nbgrader  # no late penalty there
    assert repos["renamed"]["reason"].startswith("graded ") and float(repos["renamed"]["total"]) == TOTAL
    assert {r["fingerprint"] for r in repos.values()} == {"release"}, "a renamed notebook is no modified grader"
    assert all(len(r["commit"]) == 40 for r in repos.values())


def test_a_folder_the_demo_did_not_make_is_refused(tmp_path):
    course = course_copy(tmp_path / "course")
    mine = course / "build" / "mine"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("keep me")
    proc = make(course, "demo", "DEMO_DIR=build/mine", timeout=120)
    assert proc.returncode != 0
    assert "was not made by make demo" in proc.stdout + proc.stderr and "nothing was deleted" in proc.stderr
    assert (mine / "notes.txt").read_text() == "keep me" and sorted(mine.iterdir()) == [mine / "notes.txt"]
    grading = make(course, "demo", "DEMO_DIR=grading", timeout=120)
    assert grading.returncode != 0 and "grading/" in grading.stderr and not (course / "grading").exists()


@pytest.mark.slow
def test_the_class_report_counts_the_injected_mistakes(demo):
    """The demo's last step: the class report names exactly the mistakes the simulated class
    made (one student, a known mistake in each of stages 1-3), each once, for that student."""
    from tools.simulated_course import MISTAKE_IDS

    course, out = demo
    page = _printed(course, out, "the class mistake report (HTML)")
    report = json.loads((page.parent / "report.json").read_text())
    found = {(m["stage"], m["mistake"]): sorted(m["students"]) for m in report["mistakes"]}
    assert found == {(stage, mistake): ["mistakes"] for stage, mistake in MISTAKE_IDS.items()}
    assert report["graded"] == report["students"] == 6
