"""Issue 25: each route page's checklist, walked as far as it goes without the outside service.

The numbered steps of a page's "## Checklist" and the ```bash blocks under them are parsed from
the page itself, and each command runs as written in a temporary course copy (one per page,
this test's venv linked as .venv). A command that needs GitHub, Gradescope or a browser is
skipped, with its reason in :data:`SKIPPED`; what the outside service would have produced (a
class list, an LMS download, the cloned repositories) is put in place by :data:`STAND_INS`.
A command this table does not know fails the test: a new step must be walked or skipped
deliberately. Each page ends with its check step: the solutions graded full marks.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import fake_gh
import pytest
from support import REPO, SOLUTION, link_venv, total_words

from autograder.chapters import load

PAGES = REPO / "docs" / "instructors"
CHAPTER = load("ch03_attention")
CHECK = total_words(CHAPTER)
# The solutions' grade in the course as released: its total, and its bonus beside it.
TOTAL = CHAPTER.max_score
BONUS = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)

# command (its start) -> why it is not run here
SKIPPED = {
    "git clone https://github.com/ORG/": "needs GitHub: the temporary course copy stands in for the clone",
    "make demo": "tests/e2e/test_demo.py runs it (minutes; the same steps as the rest of this page)",
    "make formgrader": "starts JupyterLab for a browser; tests/e2e/test_formgrader.py drives it",
    "cd ../ch03-attention-template": "the gh commands between it and `cd -` need GitHub",
    "gh repo create": "needs GitHub",
    "gh repo edit": "needs GitHub",
    "cd -": "closes the GitHub block above",
    "make class-report GRADESCOPE_ZIP=": "needs Gradescope's Export Submissions zip; tests/e2e/test_class_report.py "
                                          "reads one built in Gradescope's layout",
    "while read -r s; do gh repo create": "needs GitHub: the stand-in clones the template for each student instead",
    "while read -r s; do gh repo clone": "needs GitHub: the stand-in clones the template for each student instead",
    "git -C ../classroom50": "needs the classroom50 configuration repository on GitHub; tests/e2e/test_classroom50.py "
                             "runs the folder's autograder.py as Classroom 50's runner does",
    ".venv/bin/python -m pip wheel": "builds the grader's wheel with pip (setuptools from the index); "
                                     "its contents are what `make student-repo` copies",
}


@dataclass
class Step:
    number: int
    title: str
    commands: list[str]


def checklist(page: Path) -> list[Step]:
    """The numbered steps of the page's "## Checklist" with the commands of their bash blocks
    (continued lines joined, comments dropped)."""
    text = page.read_text(encoding="utf-8")
    section = text.split("## Checklist", 1)[1].split("\n## ", 1)[0]
    steps: list[Step] = []
    for match in re.finditer(r"^(\d+)\. \*\*(.+?)\*\*(.*?)(?=^\d+\. \*\*|\Z)", section, re.M | re.S):
        commands = []
        for block in re.findall(r"^\s*```bash\n(.*?)^\s*```", match.group(3), re.M | re.S):
            joined = re.sub(r"\\\n\s*", "", block)
            commands += [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
        steps.append(Step(int(match.group(1)), match.group(2), commands))
    assert [s.number for s in steps] == list(range(1, len(steps) + 1)), f"{page.name}: steps out of order"
    return steps


def _roster(course: Path) -> None:
    (course / "class.csv").write_text("id,first_name,last_name,email\ndoejane,Jane,Doe,jane@example.org\n")


def _lms_download(course: Path) -> None:
    archive = course / "grading" / "downloaded" / "ch03_attention" / "archive"
    archive.mkdir(parents=True)
    shutil.copy(SOLUTION, archive / "doejane_12345_678901_ch03_attention.ipynb")  # Canvas's name


def _organization_clone(course: Path) -> None:
    """`gh repo clone` of each student's repository: one clone of the template per student, its
    origin on github.com; ada's holds the solutions, committed and pushed before the page's
    deadline (2026-11-20 23:59 in New York), bob's the untouched release, never pushed. The
    stand-in gh (:data:`FAKE_GH`, on the commands' PATH) answers GitHub's record of the pushes."""
    template = course.parent / "ch03-attention-template"
    repos = course / "student-repos"
    for student in ("ada", "bob"):
        subprocess.run(["git", "clone", "-q", str(template), str(repos / f"ch03-attention-{student}")], check=True,
                       capture_output=True)
        subprocess.run(["git", "-C", str(repos / f"ch03-attention-{student}"), "remote", "set-url", "origin",
                        f"https://github.com/ORG/ch03-attention-{student}.git"], check=True)
    notebook = repos / "ch03-attention-ada" / "assignments" / "ch03_attention" / "ch03_attention.ipynb"
    notebook.write_text(json.dumps(json.loads(SOLUTION.read_text()), indent=1))
    git = ["git", "-C", str(repos / "ch03-attention-ada"), "-c", "user.name=Ada", "-c", "user.email=ada@example.org",
           "-c", "commit.gpgsign=false"]
    when = {"GIT_AUTHOR_DATE": "2026-11-20T20:00:00-05:00", "GIT_COMMITTER_DATE": "2026-11-20T20:00:00-05:00"}
    subprocess.run([*git, "commit", "-qam", "my answers"], check=True, capture_output=True, env={**os.environ, **when})
    answers, release = (subprocess.run([*git, "rev-parse", ref], capture_output=True, text=True, check=True).stdout.strip()
                        for ref in ("HEAD", "HEAD~1"))
    fake_gh.install(course.parent / FAKE_GH, {"ORG/ch03-attention-ada": [fake_gh.push(release, answers, "2026-11-21T01:00:30Z")],
                                              "ORG/ch03-attention-bob": []})


FAKE_GH = "bin"  # beside the course copy, first on the commands' PATH

# The check step is the same command on every page, on the same solutions and grader: it runs
# on the first page walked and its output is reused (the runtime stays modest).
SHARED = {"make test NOTEBOOK=solutions/ch03_attention/ch03_attention.ipynb"}
_shared_runs: dict[str, subprocess.CompletedProcess] = {}

# command (its start) -> what the outside world would have put in place before it runs
STAND_INS = {
    "make students ROSTER=class.csv": _roster,
    "PATH=.venv/bin:$PATH .venv/bin/nbgrader zip_collect": _lms_download,
    "make grade-repos REPOS=student-repos": _organization_clone,
}


def course_copy(root: Path) -> Path:
    course = root / "ch03-attention-course"
    course.mkdir(parents=True)
    for name in ("Makefile", "students.mk", "nbgrader_config.py", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, course / name)
    for folder in ("solutions", "assignments"):
        shutil.copytree(REPO / folder, course / folder, ignore=shutil.ignore_patterns(".*"))
    (course / ".stamp").touch()
    link_venv(course)
    return course


def walk(page: str, tmp_path: Path) -> tuple[Path, dict[str, subprocess.CompletedProcess], list[str], float]:
    """Run the page's checklist; returns the course, the output of each command run, the
    skipped commands with their reasons, and the seconds it took."""
    course = course_copy(tmp_path)
    stamp = course / ".stamp"
    # make reads variable definitions from MAKEFLAGS as if given on its command line: the
    # venv is this test's (installed), so no command installs one, and each runs as written.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")} | {
        "MAKEFLAGS": f"-- STAMP={stamp} STUDENT_STAMP={stamp}", "COLUMNS": "160",
        "PATH": f"{course.parent / FAKE_GH}{os.pathsep}{os.environ['PATH']}",
        "FAKE_GH_RECORD": str(course.parent / FAKE_GH / "record.json")}
    ran, skipped = {}, []
    started = time.monotonic()
    for step in checklist(PAGES / page):
        for command in step.commands:
            reason = next((why for start, why in SKIPPED.items() if command.startswith(start)), None)
            if reason:
                skipped.append(f"{page} step {step.number}: {command}: {reason}")
                continue
            for start, stand_in in STAND_INS.items():
                if command.startswith(start):
                    stand_in(course)
            if command in _shared_runs:
                ran[command] = _shared_runs[command]
                continue
            proc = subprocess.run(["bash", "-c", command], cwd=course, env=env, capture_output=True, text=True,
                                  timeout=600)
            if command in SHARED:
                _shared_runs[command] = proc
            assert proc.returncode == 0, f"{page} step {step.number} ({step.title}): {command}\n{proc.stdout}\n{proc.stderr}"
            ran[command] = proc
    seconds = time.monotonic() - started
    print(f"\n{page}: {len(ran)} commands run, {len(skipped)} skipped, {seconds:.0f} s\n  " + "\n  ".join(skipped))
    return course, ran, skipped, seconds


def _check_step(ran: dict[str, subprocess.CompletedProcess]) -> None:
    last = list(ran)[-1]
    assert last == "make test NOTEBOOK=solutions/ch03_attention/ch03_attention.ipynb", last
    assert CHECK in ran[last].stdout, ran[last].stdout


@pytest.mark.slow
def test_the_nbgrader_checklist_runs_as_written(tmp_path):
    course, ran, skipped, _ = walk("nbgrader.md", tmp_path)
    with open(course / "grading" / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert float(rows["doejane"]["raw_score"]) == TOTAL + BONUS and rows["doejane"]["first_name"] == "Jane"  # roster, LMS, grades
    with open(course / "grading" / "moodle-grades.csv", newline="") as handle:  # make export LMS_ROSTER=class.csv
        assert list(csv.reader(handle))[1:] == [["jane@example.org", f"{TOTAL:g}", f"{BONUS:g}", rows["doejane"]["warnings"]]]
    assert (course / "grading" / "feedback" / "doejane" / "ch03_attention" / "ch03_attention.html").is_file()
    assert len(skipped) == 3  # clone, make demo, make formgrader
    _check_step(ran)


@pytest.mark.slow
def test_the_gradescope_checklist_runs_as_written(tmp_path):
    course, ran, skipped, _ = walk("gradescope.md", tmp_path)
    assert (course / "build" / "gradescope" / "ch03_attention_autograder.zip").is_file()
    _check_step(ran)


@pytest.mark.slow
def test_the_github_organizations_checklist_runs_as_written(tmp_path):
    course, ran, skipped, _ = walk("github-organizations.md", tmp_path)
    template = course.parent / "ch03-attention-template"
    assert (template / ".git").is_dir() and not (template / "solutions").exists()
    with open(course / "build" / "grade-repos" / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert {s: r["total"] for s, r in rows.items()} == {"ch03-attention-ada": f"{TOTAL:g}", "ch03-attention-bob": "0"}
    assert rows["ch03-attention-ada"]["commit_date"] == "2026-11-21 01:00:00 UTC"
    assert rows["ch03-attention-ada"]["reason"] == "pushed 2026-11-21 01:00:30 UTC (GitHub's record)"
    assert rows["ch03-attention-bob"]["reason"] == "no push at or before the deadline (2026-11-21 04:59:00 UTC)"
    assert any("gh repo create" in s for s in skipped) and any("gh repo clone" in s for s in skipped)
    _check_step(ran)


@pytest.mark.slow
def test_the_classroom50_checklist_runs_as_written(tmp_path):
    course, ran, skipped, _ = walk("classroom50.md", tmp_path)
    template = course.parent / "ch03-attention-template"
    assert not (template / ".github" / "workflows" / "grade.yml").exists(), "GRADE_ON=none: Classroom 50 grades"
    folder = course.parent / "classroom50" / "llm-fall26" / "autograders" / "ch03-attention"
    assert (folder / "autograder.py").is_file() and (folder / "grader" / "pyproject.toml").is_file()
    assert any("git -C ../classroom50 push" in s for s in skipped)
    _check_step(ran)


@pytest.mark.slow
def test_the_colab_checklist_runs_as_written(tmp_path):
    course, ran, skipped, _ = walk("colab-kaggle.md", tmp_path)
    notebook = json.loads((course.parent / "ch03-attention-template" / "assignments" / "ch03_attention"
                           / "ch03_attention.ipynb").read_text())
    setup = next("".join(c["source"]) for c in notebook["cells"] if "GRADER_SOURCE =" in "".join(c["source"]))
    assert 'GRADER_SOURCE = "git+https://github.com/ORG/ch03-attention-grader"' in setup
    _check_step(ran)


@pytest.mark.parametrize("page", ["nbgrader.md", "gradescope.md", "github-organizations.md", "classroom50.md",
                                  "colab-kaggle.md"])
def test_every_checklist_ends_with_the_check_step(page):
    steps = checklist(PAGES / page)
    assert steps[-1].commands == ["make test NOTEBOOK=solutions/ch03_attention/ch03_attention.ipynb"], steps[-1]
    assert "expect" in steps[-1].title.lower() or "check" in steps[-1].title.lower()
