"""The students' repository (`make student-repo`), tamper evidence in CI, and the trusted
regrade of a class (`make grade-repos`).

The leak test reads the student tree as an attacker would: every file, every notebook cell,
every function body, against every answer this repository holds (the solution cells, the
hidden tests and their seeds, the catalog's correct submissions).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import fake_gh
import pytest
from leaks import CORRECT, answers, code_cells, files_of, leaks
from support import RELEASE, REPO, SOLUTION

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends import fingerprint
from autograder.frontends.instructors import deadline, student_repo

NOTEBOOK = CHAPTER.release_notebook(Path()).as_posix()
# The course's numbers, as make release wrote them: the expected grades follow an instructor's points.
TOTAL = f"{CHAPTER.max_score:g}"
STAGE1 = f"{CHAPTER.points(CHAPTER.stage(1)):g}"  # what a notebook with only stage 1 answered earns
BONUS_STAGES = [s for s in CHAPTER.stages if s.bonus]
VENV_BIN = Path(sys.executable).parent


def make(*args: str, cwd: Path = REPO, timeout: int = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("student") / "ch03-attention"
    proc = make("student-repo", f"DEST={dest}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "one commit" in proc.stdout
    return dest


# --- the tree --------------------------------------------------------------------------------

def test_one_commit_and_the_committed_tree_is_the_tree(tree):
    log = subprocess.run(["git", "-C", str(tree), "log", "--all", "--format=%H %s"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(log) == 1, log
    committed = subprocess.run(["git", "-C", str(tree), "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split()
    assert sorted(committed) == [p.relative_to(tree).as_posix() for p in files_of(tree)]
    status = subprocess.run(["git", "-C", str(tree), "status", "--porcelain"], capture_output=True, text=True,
                            check=True).stdout
    assert status == ""


def test_contents(tree):
    names = {p.relative_to(tree).as_posix() for p in files_of(tree)}
    assert not [n for n in names if n.startswith("tests/")], "no demo or bench code for students"
    assert (tree / "Makefile").read_bytes() == (REPO / student_repo.STUDENT_MAKEFILE).read_bytes()
    assert {NOTEBOOK, "Makefile", "README.md", ".gitignore", "pyproject.toml", fingerprint.WORKFLOW,
            fingerprint.RELEASE_FILE, "autograder/__main__.py"} <= names
    # the release's notebook, its hand-in paragraph saying how this repository is graded
    assert (tree / NOTEBOOK).read_bytes() == student_repo.with_hand_in(RELEASE.read_bytes(), NOTEBOOK, "push")
    assert b"**How to hand in**: commit and push" in (tree / NOTEBOOK).read_bytes()
    beside = Path(NOTEBOOK).parent / "Makefile"  # make test from the notebook's folder (released beside it)
    assert beside.as_posix() in names
    dry = subprocess.run(["make", "-n", "test"], cwd=tree / beside.parent, capture_output=True, text=True)
    assert dry.returncode == 0 and "-m autograder" in dry.stdout, dry.stdout + dry.stderr
    for instructor_only in ("solutions", "tests", "grading", "nbgrader_config.py", ".ci", ".github/workflows/check.yml",
                            "grading/gradebook.db"):
        assert not any(n == instructor_only or n.startswith(instructor_only + "/") for n in names), instructor_only
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    readme = (tree / "README.md").read_text()
    assert "## Quick start" in readme and "make test" in readme and "## How you are graded" in readme
    for stage in CHAPTER.stages:
        assert f"| {stage.number} | `{stage.id}` | {stage.title} |" in readme
    assert "Instructors" not in readme and "nbgrader" not in readme and "solutions/" not in readme


def test_no_answer_reaches_the_student_tree(tree):
    found = answers()
    assert leaks(tree, found) == []


def test_the_leak_test_finds_planted_answers(tree, tmp_path):
    """Every kind of answer, disguised as a student might find it, is caught."""
    found = answers()
    planted = tmp_path / "planted"
    shutil.copytree(tree, planted, ignore=shutil.ignore_patterns(".git"))
    solution_cell = next(s for s in code_cells(SOLUTION) if "class CausalAttention" in s)
    reformatted = re.sub(r"#.*", "", solution_cell).replace("    ", "\t")  # no comments, tabs
    (planted / "autograder" / "extra.py").write_text(reformatted.replace("### BEGIN SOLUTION", ""))
    shutil.copy(CORRECT[0], planted / "autograder" / "styles.py")
    (planted / "NOTES.md").write_text("seed: " + next(iter(found["seeds"])) + "\n")
    notebook = json.loads((planted / NOTEBOOK).read_text())
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": "def f(x):\n    exp_x = torch.exp(x)\n    return exp_x / exp_x.sum(dim=-1, keepdim=True)\n"})
    (planted / NOTEBOOK).write_text(json.dumps(notebook))
    problems = "\n".join(leaks(planted, found))
    assert "autograder/extra.py: a solution's function body" in problems
    assert "autograder/styles.py: a solution's function body" in problems
    assert "NOTES.md: hidden-test seed" in problems
    assert f"{NOTEBOOK}: a solution's function body" in problems


def test_student_makefile_reuses_the_course_recipes(tree):
    """The students' Makefile is students.mk, which the course's Makefile includes: the same
    recipes, not a second copy to keep in step, and none of the instructor's."""
    assert (tree / "Makefile").read_bytes() == (REPO / "students.mk").read_bytes()
    assert re.search(r"^include students\.mk$", (REPO / "Makefile").read_text(), re.M)
    theirs = (tree / "Makefile").read_text()
    for instructor_target in ("release:", "autograde:", "check:", "student-repo:", "grade-repos:", "solutions/"):
        assert instructor_target not in theirs
    proc = make("-n", "test", "ci-grade", "lab", cwd=tree)
    assert proc.returncode == 0, proc.stderr


def test_refuses_a_folder_that_is_not_empty(tmp_path):
    dest = tmp_path / "work"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me")
    proc = make("student-repo", f"DEST={dest}")
    assert proc.returncode != 0
    assert "is not empty" in proc.stderr and "Traceback" not in proc.stderr
    assert [p.name for p in dest.iterdir()] == ["mine.txt"] and (dest / "mine.txt").read_text() == "keep me"


def test_release_record_matches_the_instructors_view(tree):
    record = json.loads((tree / fingerprint.RELEASE_FILE).read_text())
    assert record["parts"] == student_repo.release_parts(CHAPTER)
    assert record["fingerprint"] == fingerprint.digest(record["parts"])
    assert any(part.startswith(fingerprint.LOCKED_CELL_PREFIX + "test_stage4") for part in record["parts"])
    assert {"Makefile", "pyproject.toml", fingerprint.WORKFLOW, "autograder/core/engine.py"} <= set(record["parts"])


# --- tamper evidence in CI -------------------------------------------------------------------

def ci_in(tree: Path, reports: Path) -> tuple[subprocess.CompletedProcess, dict, str]:
    """`python -m autograder ci` as the student repository's workflow runs it (make ci-grade): its own
    copy of the grader (the tree's `autograder/` comes first on the path)."""
    summary = reports / "summary.md"
    proc = subprocess.run([sys.executable, "-m", "autograder", "ci", NOTEBOOK, "--device", "cpu", "--stage", "1",
                           "--results", str(reports / "results.json"), "--junit", str(reports / "junit.xml"),
                           "--summary", str(summary)], cwd=tree, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc, json.loads((reports / "results.json").read_text()), summary.read_text()


def test_ci_says_when_the_grader_was_modified(tree, tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns("__pycache__", "build"))
    (tmp_path / "clean").mkdir()
    proc, results, summary = ci_in(copy, tmp_path / "clean")
    assert results["extra_data"]["fingerprint"]["status"] == "release", proc.stdout
    assert results["extra_data"]["fingerprint"]["grader_modified"] is False
    assert "grader unmodified" in summary and "Grader modified" not in summary

    # Renamed as Jupyter's Duplicate names it, then gone: graded as found, or a 0 with the reason;
    # neither is a modified grader.
    notebook = copy / NOTEBOOK
    renamed = notebook.with_name("Copy of ch03_attention (1).ipynb")
    notebook.rename(renamed)
    (tmp_path / "renamed").mkdir()
    proc, results, summary = ci_in(copy, tmp_path / "renamed")
    assert results["extra_data"]["fingerprint"]["status"] == "release", proc.stdout
    assert "grader modified" not in proc.stdout.lower() and "Copy of ch03_attention (1).ipynb" in proc.stdout
    renamed.unlink()
    (tmp_path / "missing").mkdir()
    proc, results, summary = ci_in(copy, tmp_path / "missing")
    assert results["extra_data"]["fingerprint"]["status"] == "release", proc.stdout
    assert "grader modified" not in proc.stdout.lower() and results["score"] == 0
    renamed.with_name(notebook.name).write_bytes((tree / NOTEBOOK).read_bytes())

    compare = copy / "autograder" / "core" / "compare.py"
    compare.write_text(compare.read_text() + "\n# every tolerance could be loosened here\n")
    (tmp_path / "tampered").mkdir()
    proc, results, summary = ci_in(copy, tmp_path / "tampered")
    verdict = results["extra_data"]["fingerprint"]
    assert verdict["status"] == "modified" and verdict["grader_modified"] is True
    assert verdict["changed"] == ["autograder/core/compare.py"]
    assert verdict["release_fingerprint"] == json.loads((tree / fingerprint.RELEASE_FILE).read_text())["fingerprint"]
    assert verdict["fingerprint"] != verdict["release_fingerprint"]
    assert "**Grader modified.**" in summary and "autograder/core/compare.py" in summary
    assert results["output"].startswith("GRADER MODIFIED")
    assert "::warning title=Grader modified::grader modified: autograder/core/compare.py" in proc.stdout
    junit = (tmp_path / "tampered" / "junit.xml").read_text()
    assert '<property name="grader_status" value="modified" />' in junit


def test_a_deleted_or_edited_release_record_is_a_modification(tree, tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    assert fingerprint.verify_checkout(copy, NOTEBOOK).status == "release"
    record = json.loads((copy / fingerprint.RELEASE_FILE).read_text())
    record["fingerprint"] = "0" * 64
    (copy / fingerprint.RELEASE_FILE).write_text(json.dumps(record))
    verdict = fingerprint.verify_checkout(copy, NOTEBOOK)
    assert verdict.status == "modified" and verdict.changed == [fingerprint.RELEASE_FILE]
    (copy / fingerprint.RELEASE_FILE).unlink()
    verdict = fingerprint.verify_checkout(copy, NOTEBOOK)
    assert verdict.status == "modified" and verdict.changed == [fingerprint.RELEASE_FILE]
    assert fingerprint.verify_checkout(REPO, NOTEBOOK).status == "unknown", "the course repository has no release"


def test_fingerprint_covers_the_locked_cells_not_the_answers(tree):
    notebook = json.loads((tree / NOTEBOOK).read_text())
    parts = fingerprint.parts_of({NOTEBOOK: json.dumps(notebook).encode()}, NOTEBOOK)
    for cell in notebook["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            cell["source"] = "def softmax_naive(x):\n    return x\n"  # a student's answer: no change
    assert fingerprint.parts_of({NOTEBOOK: json.dumps(notebook).encode()}, NOTEBOOK) == parts
    test_cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("locked"))
    test_cell["source"] = "print('all passed')"
    changed = fingerprint.compare(fingerprint.parts_of({NOTEBOOK: json.dumps(notebook).encode()}, NOTEBOOK), parts)
    assert changed.status == "modified" and changed.changed == [fingerprint.LOCKED_CELL_PREFIX + "test_stage1_softmax"]


# --- the trusted regrade ---------------------------------------------------------------------

def release_answered(answered) -> str:
    """The release as a student hands it in: the answer cells whose grade_id ``answered``
    accepts filled in with the solution's, everything else (the locked test cells) untouched."""
    solution = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in json.loads(SOLUTION.read_text())["cells"]
                if c["metadata"].get("nbgrader", {}).get("solution")}
    notebook = json.loads(RELEASE.read_text())
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        if grade_id in solution and answered(grade_id):
            cell["source"] = solution[grade_id]
    return json.dumps(notebook, indent=1)


def commit_all(repo: Path, message: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
           "GIT_COMMITTER_EMAIL": "s@x", **({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {})}
    subprocess.run(["git", "-C", str(repo), "add", "--all"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", message], check=True, env=env)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file and link under ``folder`` (.git included) with its hash and mtime."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path)] = (os.readlink(path), 0)
        elif path.is_file():
            found[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        else:
            found[str(path)] = ("dir", 0)
    return found


# Where each clone sits in the class folder: directly inside, or one folder down as the cloning
# tools leave them (gh classroom clone's <assignment>-submissions/, a folder per section).
CLASS_LAYOUT = {"blank": "", "tampered": "", "no-notebook": "", "perfect": "ch03-attention-submissions",
                "partial": "ch03-attention-submissions", "renamed": "section-b"}


@pytest.fixture(scope="module")
def class_regrade(tree, tmp_path_factory):
    """Six clones of the student repository as the deadline finds them, in a mixed layout, regraded."""
    repos = tmp_path_factory.mktemp("student-repos")
    commits, where = {}, {student: repos / folder / student for student, folder in CLASS_LAYOUT.items()}
    for path in where.values():
        subprocess.run(["git", "clone", "-q", str(tree), str(path)], check=True)
    (where["perfect"] / NOTEBOOK).write_text(release_answered(lambda grade_id: True))
    (where["partial"] / NOTEBOOK).write_text(release_answered(lambda grade_id: grade_id.startswith("stage1_")))
    # Renamed as Jupyter's Duplicate or Colab's Save a copy names it; its locked cells untouched.
    (where["renamed"] / NOTEBOOK).unlink()
    (where["renamed"] / NOTEBOOK).with_name("Copy of ch03_attention (1).ipynb").write_text(
        release_answered(lambda grade_id: grade_id.startswith("stage1_")))
    # The tampered grader would give everything full marks; the regrade never runs it.
    engine = where["tampered"] / "autograder" / "core" / "results.py"
    engine.write_text(engine.read_text().replace("return self.check.points if self.status is CheckStatus.PASSED else 0.0",
                                                 "return self.check.points"))
    assert "return self.check.points\n" in engine.read_text()
    (where["no-notebook"] / NOTEBOOK).unlink()
    for student, path in where.items():
        commits[student] = commit_all(path, "work")
    before = snapshot(repos)
    out = tmp_path_factory.mktemp("regrade") / "out"
    started = time.monotonic()
    proc = make("grade-repos", f"REPOS={repos}", f"OUT={out}", "JOBS=2", timeout=900)
    seconds = time.monotonic() - started
    print(f"grade-repos, six repositories: {seconds:.1f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    return {"rows": rows, "commits": commits, "unchanged": snapshot(repos) == before, "out": out, "repos": repos,
            "said": proc.stdout}


def test_grade_repos_csv(class_regrade):
    rows, commits = class_regrade["rows"], class_regrade["commits"]
    stage_columns = [f"stage{s.number}_{s.id}" for s in CHAPTER.graded_stages]
    with (class_regrade["out"] / "grades.csv").open() as handle:
        header = next(csv.reader(handle))
    bonus_columns = [f"bonus_stage{s.number}_{s.id}" for s in BONUS_STAGES]
    assert header == ["student", *stage_columns, "total", *bonus_columns, "commit", "commit_date", "fingerprint", "reason"]
    assert sorted(rows) == sorted(CLASS_LAYOUT), "one row per repository, whichever folder holds it"
    assert f"{len(CLASS_LAYOUT)} repositories" in class_regrade["said"]
    expected_totals = {"blank": "0", "perfect": TOTAL, "partial": STAGE1, "tampered": "0", "no-notebook": "0",
                       "renamed": STAGE1}
    assert {s: rows[s]["total"] for s in rows} == expected_totals
    assert [rows["perfect"][c] for c in stage_columns] == [f"{CHAPTER.points(s):g}" for s in CHAPTER.graded_stages]
    assert [rows["perfect"][c] for c in bonus_columns] == [f"{CHAPTER.points(s):g}" for s in BONUS_STAGES]
    assert rows["partial"]["stage1_softmax"] == STAGE1 and rows["partial"]["stage2_scores"] == "0"
    assert {s: rows[s]["commit"] for s in rows} == commits
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", rows[s]["commit_date"]) for s in rows)
    for student in ("blank", "perfect", "partial", "renamed", "no-notebook"):
        assert rows[student]["fingerprint"] == "release", rows[student]  # a rename, a missing notebook: no edit
    assert rows["renamed"]["reason"] == f"graded {Path(NOTEBOOK).with_name('Copy of ch03_attention (1).ipynb').as_posix()} " \
                                        f"(not at {NOTEBOOK})"
    assert rows["tampered"]["fingerprint"] == "modified: autograder/core/results.py"
    assert rows["no-notebook"]["reason"].startswith("no notebook (.ipynb) in the repository")


DEADLINE = "DEADLINE=2026-11-20 23:59 America/New_York"  # 2026-11-21 04:59:00 UTC


def _clone_on_github(tree: Path, repo: Path) -> str:
    """A clone whose origin is ``github.com/course/<folder>``; the release's commit."""
    subprocess.run(["git", "clone", "-q", str(tree), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "set-url", "origin", f"https://github.com/course/{repo.name}.git"],
                   check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_grade_repos_deadline_grades_the_last_push_before_it_by_githubs_record(tree, tmp_path):
    """DEADLINE=: each repository at its last push at or before the deadline by GitHub's record (a
    stand-in gh on PATH answers the activity API), whatever its commits' dates say: a commit dated
    before the deadline and pushed after it is not graded, a commit pushed on time from a machine
    whose clock runs ahead is. The checkouts are left as they are."""
    repos = tmp_path / "repos"
    release = {name: _clone_on_github(tree, repos / name) for name in ("late", "skewed", "late-only")}
    (repos / "late" / NOTEBOOK).write_text(release_answered(lambda grade_id: grade_id.startswith("stage1_")))
    stage1 = commit_all(repos / "late", "stage 1", date="2026-11-20T20:00:00-05:00")
    (repos / "late" / NOTEBOOK).write_text(release_answered(lambda grade_id: True))
    back_dated = commit_all(repos / "late", "everything, pushed late", date="2026-11-20T23:00:00-05:00")
    (repos / "skewed" / NOTEBOOK).write_text(release_answered(lambda grade_id: True))
    skewed = commit_all(repos / "skewed", "everything", date="2026-11-23T09:00:00-05:00")
    (repos / "late-only" / NOTEBOOK).write_text(release_answered(lambda grade_id: True))
    late_only = commit_all(repos / "late-only", "everything", date="2026-11-20T22:00:00-05:00")
    env = fake_gh.install(tmp_path / "bin", {
        "course/late": [fake_gh.push(release["late"], stage1, "2026-11-21T01:00:05Z"),
                        fake_gh.push(stage1, back_dated, "2026-11-21T08:10:00Z")],
        "course/skewed": [fake_gh.push(release["skewed"], skewed, "2026-11-21T03:00:00Z")],
        "course/late-only": [fake_gh.push(release["late-only"], late_only, "2026-11-22T12:00:00Z")]})
    before = snapshot(repos)
    out = tmp_path / "out"
    proc = make("grade-repos", f"REPOS={repos}", f"OUT={out}", DEADLINE, "JOBS=2", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "deadline 2026-11-21 04:59:00 UTC: each repository's last push at or before it, by GitHub's record" in proc.stdout
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert (rows["late"]["total"], rows["late"]["commit"]) == (STAGE1, stage1)
    assert rows["late"]["reason"] == (f"pushed 2026-11-21 01:00:05 UTC (GitHub's record); pushed 2026-11-21 08:10:00 UTC, "
                                      f"after the deadline: {back_dated[:10]}, whose committer date says 2026-11-21 "
                                      f"04:00:00 UTC, not graded")
    assert (rows["skewed"]["total"], rows["skewed"]["commit"], rows["skewed"]["commit_date"]) == \
        (TOTAL, skewed, "2026-11-23 14:00:00 UTC")  # the date is shown, never trusted
    assert (rows["late-only"]["total"], rows["late-only"]["commit"]) == ("0", "")
    assert rows["late-only"]["reason"].startswith("no push at or before the deadline (2026-11-21 04:59:00 UTC); pushed "
                                                  "2026-11-22 12:00:00 UTC, after the deadline")
    assert snapshot(repos) == before
    asked = sorted(call[2] for call in fake_gh.calls(env) if call[0] == "api")
    assert asked == sorted(f"repos/course/{name}/activity?ref=refs%2Fheads%2Fmain&per_page=100" for name in release)


def test_grade_repos_deadline_without_a_record_refuses_unless_the_dates_are_trusted(tree, tmp_path):
    """No record of the pushes (gh not logged in): refused, saying how to get one, nothing
    written. TRUST_COMMIT_DATES=1: the last commit whose committer date is at or before the
    deadline, and every row says the date is the student's."""
    repo = tmp_path / "repos" / "dated"
    subprocess.run(["git", "clone", "-q", str(tree), str(repo)], check=True)
    (repo / NOTEBOOK).write_text(release_answered(lambda grade_id: grade_id.startswith("stage1_")))
    on_time = commit_all(repo, "stage 1", date="2099-11-20T12:00:00-05:00")
    (repo / NOTEBOOK).write_text(release_answered(lambda grade_id: True))
    late = commit_all(repo, "everything, a day late", date="2099-11-21T12:00:00-05:00")
    env = fake_gh.install(tmp_path / "bin", {}, logged_in=False)
    out = tmp_path / "out"
    proc = make("grade-repos", f"REPOS={repo.parent}", f"OUT={out}", "DEADLINE=2099-11-20 23:59 America/New_York", env=env)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and not out.exists()
    assert "gh is not logged in" in proc.stderr and "make collect-repos" in proc.stderr and "TRUST_COMMIT_DATES=1" in proc.stderr
    before = snapshot(repo)
    proc = make("grade-repos", f"REPOS={repo.parent}", f"OUT={out}", "DEADLINE=2099-11-20 23:59 America/New_York",
                "TRUST_COMMIT_DATES=1", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "deadline 2099-11-21 04:59:00 UTC" in proc.stdout
    (row,) = csv.DictReader((out / "grades.csv").open())
    assert (row["total"], row["commit"], row["commit_date"]) == (STAGE1, on_time, "2099-11-20 17:00:00 UTC")
    assert row["reason"] == deadline.TRUSTED_DATES and "TRUST_COMMIT_DATES=1" in row["reason"]
    assert snapshot(repo) == before and late != on_time
    proc = make("grade-repos", f"REPOS={repo.parent}", f"OUT={tmp_path / 'early'}", "DEADLINE=2020-01-01 00:00 UTC",
                "TRUST_COMMIT_DATES=1", env=env)
    (row,) = csv.DictReader((tmp_path / "early" / "grades.csv").open())
    assert row["total"] == "0" and row["reason"] == ("no commit dated at or before the deadline (2020-01-01 00:00:00 UTC) "
                                                     "by the student's machine (TRUST_COMMIT_DATES=1)")
    proc = make("grade-repos", f"REPOS={repo.parent}", f"OUT={tmp_path / 'pst'}", "DEADLINE=2099-11-20 23:59 PST", env=env)
    assert proc.returncode != 0 and "abbreviation" in proc.stderr and not (tmp_path / "pst").exists()


def test_collect_repos_at_the_deadline_then_grade_repos_grades_what_it_recorded(tree, tmp_path):
    """make collect-repos (run at the deadline) records each origin's tip by the instructor's
    clock; a back-dated commit pushed after it and fetched is not what make grade-repos
    COLLECTED= grades."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(tree), str(origin)], check=True)
    repo = tmp_path / "repos" / "ann"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    (repo / NOTEBOOK).write_text(release_answered(lambda grade_id: grade_id.startswith("stage1_")))
    on_time = commit_all(repo, "stage 1", date="2026-11-20T20:00:00-05:00")
    subprocess.run(["git", "-C", str(repo), "push", "-q", "origin", "main"], check=True)
    collected = tmp_path / "collected.json"
    proc = make("collect-repos", f"REPOS={repo.parent}", f"COLLECTED={collected}")
    assert proc.returncode == 0 and f"ann: {on_time[:10]}" in proc.stdout, proc.stdout + proc.stderr
    (repo / NOTEBOOK).write_text(release_answered(lambda grade_id: True))
    late = commit_all(repo, "everything", date="2026-11-20T21:00:00-05:00")
    subprocess.run(["git", "-C", str(repo), "push", "-q", "origin", "main"], check=True)
    out = tmp_path / "out"
    proc = make("grade-repos", f"REPOS={repo.parent}", f"OUT={out}", f"COLLECTED={collected}", DEADLINE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = csv.DictReader((out / "grades.csv").open())
    assert (row["total"], row["commit"]) == (STAGE1, on_time) and late != on_time
    assert re.fullmatch(r"the tip collected \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by the instructor's clock, \+\d+ s "
                        r"from the deadline", row["reason"]), row["reason"]


def test_grade_repos_reports_and_leaves_the_repositories_alone(class_regrade):
    out = class_regrade["out"]
    assert class_regrade["unchanged"], "grade-repos wrote into the student repositories"
    report = (out / "partial" / "report.txt").read_text()
    assert f"Total: {STAGE1}/{TOTAL}" in report
    assert json.loads((out / "perfect" / "results.json").read_text())["score"] == CHAPTER.max_score
    assert "no notebook" in (out / "no-notebook" / "report.txt").read_text()


def test_grade_repos_damaged_notebook_and_a_link_get_zero_with_the_reason(tree, tmp_path):
    repos = tmp_path / "repos"
    for student in ("damaged", "linked"):
        subprocess.run(["git", "clone", "-q", str(tree), str(repos / student)], check=True)
    (repos / "damaged" / NOTEBOOK).write_text('{"cells": [')
    (repos / "linked" / NOTEBOOK).unlink()
    (repos / "linked" / NOTEBOOK).symlink_to(SOLUTION)  # the instructor's solutions, on the instructor's disk
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-repos", str(repos), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert rows["damaged"]["total"] == "0" and "not valid notebook JSON" in rows["damaged"]["reason"]
    assert rows["linked"]["total"] == "0" and "symbolic link" in rows["linked"]["reason"]


def test_grade_repos_refuses_to_write_inside_repos_or_over_other_files(tree, tmp_path):
    repos = tmp_path / "repos"
    subprocess.run(["git", "clone", "-q", str(tree), str(repos / "a")], check=True)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-repos", str(repos), "--out",
                           str(repos / "out")], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "inside" in proc.stderr and not (repos / "out").exists()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-repos", str(repos), "--out", str(other)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "did not write" in proc.stderr
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    proc = make("grade-repos")
    assert proc.returncode != 0 and "usage: make grade-repos REPOS=" in proc.stdout


# --- a fresh clone, as a student gets it ---------------------------------------------------------

@pytest.mark.slow
def test_fresh_clone_make_test_grades_the_blank_notebook_zero(tree, tmp_path):
    """`git clone` + `make test`: bootstraps .venv (the pinned CPU torch) and grades 0 points."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tree), str(clone)], check=True)
    started = time.monotonic()
    proc = make("test", cwd=clone, timeout=1200)
    print(f"fresh clone, make test: {time.monotonic() - started:.0f} s")
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output
    assert f"Total: 0/{TOTAL}" in proc.stdout, output[-3000:]
    torch_version = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    assert torch_version.startswith("2.13.0") and "cu" not in torch_version, torch_version
