"""A chapter defined outside the package (tests/toy_chapter/) is graded by the unmodified engine,
command line and CI front end: a chapter is data, no edit to ``autograder/`` is needed.

The toy chapter has one stage, ``double(x)`` = 2 * x, and two checks: 1.1 (4 points, a fixed
example) and 1.2 (6 points, a hypothesis property over shapes). The submissions below earn
10/10, 4/10 (a ``double`` that flattens its input passes 1.1 and fails 1.2) and 0/10 (a stub).
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from support import REPO, TESTS, grade_in_process
from toy_chapter import CHAPTER

from autograder.core.checks import CheckStatus

# A dotted module path that defines CHAPTER, as `--chapter package.module` takes it.
CHAPTER_MODULE = "toy_chapter.chapter"

CORRECT = "def double(x):\n    return 2 * x\n"
FLATTENS = "def double(x):\n    return (2 * x).reshape(-1)\n"  # right on 1-d inputs only
STUB = "def double(x):\n    raise NotImplementedError\n"

FIXED_TITLE = "doubles the fixed example [1, -2, 3.5]"
PROPERTY_TITLE = "doubles any tensor: the same shape, each value twice"


@dataclass
class Graded:
    returncode: int
    stdout: str
    stderr: str
    results: dict | None
    junit: ET.Element | None = None
    summary: str = ""

    @property
    def log(self) -> str:
        return f"exit {self.returncode}\n{self.stdout}\n{self.stderr}"

    def test(self, number: str) -> dict:
        return next(t for t in self.results["tests"] if t["number"] == number)


def grade(front_end: str, source: str, tmp_path: Path, *args: str, chapter: str = CHAPTER_MODULE) -> Graded:
    """Grade ``source`` (a .py submission) through a real front end in a fresh process, with the
    minimal environment of conftest.run_grader plus PYTHONPATH=tests/ for the toy chapter."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    submission = tmp_path / "submission.py"
    submission.write_text(source)
    results, junit, summary = tmp_path / "results.json", tmp_path / "junit.xml", tmp_path / "summary.md"
    command = [sys.executable, "-m", *front_end.split(), str(submission), "--chapter", chapter, "--device", "cpu",
               "--results", str(results)]
    if front_end == "autograder ci":
        command += ["--junit", str(junit), "--summary", str(summary)]
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(TESTS)}
    proc = subprocess.run([*command, *args], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    return Graded(proc.returncode, proc.stdout, proc.stderr,
                  json.loads(results.read_text()) if results.exists() else None,
                  ET.parse(junit).getroot() if junit.exists() else None,
                  summary.read_text() if summary.exists() else "")


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> dict[str, Graded]:
    root = tmp_path_factory.mktemp("toy_cli")
    return {name: grade("autograder", source, root / name)
            for name, source in (("correct", CORRECT), ("flattens", FLATTENS), ("stub", STUB))}


@pytest.fixture(scope="module")
def ci(tmp_path_factory) -> dict[str, Graded]:
    root = tmp_path_factory.mktemp("toy_ci")
    return {name: grade("autograder ci", source, root / name)
            for name, source in (("correct", CORRECT), ("flattens", FLATTENS))}


# -- the chapter as data --------------------------------------------------------------------

def test_toy_chapter_declares_two_checks_worth_ten_points():
    stage = CHAPTER.stage("double")
    assert [(c.id, c.points, c.title) for c in CHAPTER.checks_for(stage)] == [
        ("1.1", 4, FIXED_TITLE), ("1.2", 6, PROPERTY_TITLE)]
    assert CHAPTER.points(stage) == 10
    assert CHAPTER.max_score == 10


def test_toy_checks_import_only_the_core():
    source = (TESTS / "toy_chapter" / "checks.py").read_text()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports, source
    assert all(not line.startswith(("from autograder", "import autograder")) or
               line.startswith("from autograder.core.") for line in imports), imports


# -- the engine in this process (no worker): the same checks, the same statuses --------------

def test_engine_gives_a_correct_double_full_marks():
    result = grade_in_process(CHAPTER, CHAPTER.stage(1), {"double": lambda x: 2 * x})
    assert [c.status for c in result.checks] == [CheckStatus.PASSED, CheckStatus.PASSED]
    assert (result.score, result.max_score) == (10, 10)


def test_engine_gives_a_flattening_double_the_fixed_example_only():
    result = grade_in_process(CHAPTER, CHAPTER.stage(1), {"double": lambda x: (2 * x).reshape(-1)})
    assert [c.status for c in result.checks] == [CheckStatus.PASSED, CheckStatus.FAILED]
    assert result.score == 4
    assert "has shape" in result.checks[1].message
    # the shapes observed, then the stage's advice (a wrong shape names no mistake by itself)
    assert result.checks[1].hint == ("the output has shape [6] where [2, 3] is expected: "
                                     "keep the input's shape: return 2 * x, without reshaping")


def test_engine_says_what_is_missing():
    result = grade_in_process(CHAPTER, CHAPTER.stage(1), {"triple": lambda x: 3 * x})
    assert result.score == 0
    assert all(c.status is CheckStatus.FAILED and c.message == "`double` is not defined" for c in result.checks)


def test_engine_reports_a_stub_as_not_implemented():
    def double(x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    result = grade_in_process(CHAPTER, CHAPTER.stage(1), {"double": double})
    assert [c.status for c in result.checks] == [CheckStatus.NOT_IMPLEMENTED] * 2
    assert result.status is CheckStatus.NOT_IMPLEMENTED


# -- python -m autograder ----------------------------------------------------------------

def test_cli_gives_the_correct_submission_full_marks(cli):
    run = cli["correct"]
    assert run.returncode == 0, run.log
    assert "Total: 10/10" in run.stdout, run.log
    assert run.results["score"] == 10
    assert [t["number"] for t in run.results["tests"]] == ["1.1", "1.2"]
    assert [(t["status"], t["score"], t["max_score"]) for t in run.results["tests"]] == [
        ("passed", 4, 4), ("passed", 6, 6)]
    assert "Traceback" not in run.stdout + run.stderr


def test_cli_gives_the_flattening_submission_partial_marks(cli):
    run = cli["flattens"]
    assert run.returncode == 1, run.log
    assert "Total: 4/10" in run.stdout, run.log
    assert run.results["score"] == 4
    assert [t["number"] for t in run.results["tests"]] == ["1.1", "1.2"]
    assert run.test("1.1")["status"] == "passed"
    failed = run.test("1.2")
    assert (failed["status"], failed["score"], failed["max_score"]) == ("failed", 0, 6)
    assert "has shape" in failed["output"] and "smallest failing case" in failed["output"], failed
    assert "hint: the output has shape [6] where [2, 3] is expected: keep the input's shape" in failed["output"], failed


def test_cli_reports_a_stub_as_not_implemented(cli):
    run = cli["stub"]
    assert run.returncode == 1, run.log
    assert run.results["score"] == 0
    assert [t["number"] for t in run.results["tests"]] == ["1.1", "1.2"]
    assert all("not implemented yet" in t["output"] for t in run.results["tests"]), run.results
    assert "not implemented yet" in run.stdout, run.log


def test_cli_names_the_checks_by_the_toy_chapters_stage(cli):
    names = [t["name"] for t in cli["correct"].results["tests"]]
    assert names == [f"Stage 1 (double) 1.1: {FIXED_TITLE}", f"Stage 1 (double) 1.2: {PROPERTY_TITLE}"]


def test_cli_rejects_an_unknown_chapter_module(tmp_path):
    run = grade("autograder", CORRECT, tmp_path, chapter="toy_chapter.no_such_module")
    assert run.returncode == 2, run.log
    assert "no module toy_chapter.no_such_module" in run.stderr, run.log


def test_cli_loads_a_chapter_from_a_top_level_package(tmp_path):
    run = grade("autograder", CORRECT, tmp_path, chapter="toy_chapter")
    assert run.returncode == 0, run.log
    assert run.results["score"] == 10


# -- python -m autograder ci -------------------------------------------------------------------------

def test_ci_exits_0_and_reports_full_marks(ci):
    run = ci["correct"]
    assert run.returncode == 0, run.log
    assert run.results["score"] == 10
    assert [t["number"] for t in run.results["tests"]] == ["1.1", "1.2"]
    assert "::notice title=Grade::10/10 points" in run.stdout, run.log
    assert "## toy_double: 10/10 points" in run.summary, run.summary


def test_ci_exits_0_for_a_partial_grade(ci):
    run = ci["flattens"]
    assert run.returncode == 0, run.log  # a low score is a grade, not a broken build
    assert run.results["score"] == 4
    assert [t["number"] for t in run.results["tests"]] == ["1.1", "1.2"]
    assert "::notice title=Grade::4/10 points" in run.stdout, run.log
    assert "## toy_double: 4/10 points" in run.summary, run.summary
    assert "**1.2**" in run.summary, run.summary  # the failed check is listed


def test_ci_junit_has_one_case_per_toy_check(ci):
    for name, failed in (("correct", []), ("flattens", ["1.2"])):
        junit = ci[name].junit
        assert junit is not None, ci[name].log
        assert junit.get("name") == "toy_double"
        suites = junit.findall("testsuite")
        assert [s.get("name") for s in suites] == ["Stage 1 (double)"]
        cases = suites[0].findall("testcase")
        assert [c.get("name") for c in cases] == [f"1.1 {FIXED_TITLE}", f"1.2 {PROPERTY_TITLE}"]
        assert {c.get("classname") for c in cases} == {"toy_double.stage1_double"}
        assert [c.get("name").split()[0] for c in cases if c.find("failure") is not None] == failed
        assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("2", str(len(failed)), "0")


def test_ci_exits_1_below_the_pass_mark(tmp_path):
    run = grade("autograder ci", FLATTENS, tmp_path, "--pass-mark", "5")
    assert run.returncode == 1, run.log
    assert "Score 4 is below the pass mark 5." in run.stdout, run.log
    assert run.results["score"] == 4
