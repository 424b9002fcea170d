"""Issue 2: the notebook, its release and the grader fit together."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from support import RELEASE, REPO, SOLUTION, run_grader, total_words

from autograder.chapters.ch03_attention import CHAPTER

STAGES, checks_for = CHAPTER.stages, CHAPTER.checks_for


def _cells(path):
    return json.loads(path.read_text())["cells"]


def test_solution_gets_full_marks(graded_solution):
    run = graded_solution
    assert run.returncode == 0, run.stdout + run.stderr
    assert total_words(CHAPTER) in run.stdout
    assert run.results["score"] == CHAPTER.max_score
    numbers = [t["number"] for t in run.results["tests"]]
    expected = [c.id for s in STAGES for c in checks_for(s)]
    assert numbers == expected
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in run.results["tests"])
    assert "Traceback" not in run.stdout + run.stderr


def test_release_gets_zero_with_not_implemented_rows(graded_release):
    run = graded_release
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"Total: 0/{CHAPTER.max_score:g}" in run.stdout
    assert run.results["score"] == 0
    rows = [line for line in run.stdout.splitlines() if re.match(r"│ \d \w+", line)]
    assert len(rows) == len(STAGES), run.stdout
    assert all("not implemented yet" in row for row in rows), run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_one_stage_only(tmp_path):
    run = run_grader(SOLUTION, tmp_path, "--stage", "4")
    assert run.returncode == 0, run.stdout
    points = CHAPTER.points(CHAPTER.stage(4))
    assert f"Total: {points:g}/{points:g}" in run.stdout
    assert {t["number"].split(".")[0] for t in run.results["tests"]} == {"4"}


def test_notebook_follows_the_stages():
    """Headings, grade ids and points in the notebook match autograder.core.chapter."""
    cells = _cells(SOLUTION)
    headings = [c for c in cells if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Stage")]
    assert ["".join(c["source"]).splitlines()[0] for c in headings] == \
        [f"## {s.label}: {s.title}" for s in STAGES]
    # nbgrader adds up every graded cell, so a bonus stage's test cell is locked but not graded
    # (nbgrader has no extra-credit cells): nbgrader's maximum stays the course's total.
    graded = [s for s in STAGES if not s.bonus]
    tests = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade")]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in tests] == [s.grade_id for s in graded]
    assert [c["metadata"]["nbgrader"]["points"] for c in tests] == [CHAPTER.points(s) for s in graded]
    bonus_cells = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") in
                   {s.grade_id for s in STAGES if s.bonus}]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in bonus_cells] == [s.grade_id for s in STAGES if s.bonus]
    for cell, stage in zip(tests + bonus_cells, graded + [s for s in STAGES if s.bonus]):
        assert cell["metadata"]["nbgrader"]["locked"] is True
        assert f'grade_stage("{CHAPTER.id}", {stage.number}, globals())' in "".join(cell["source"])


def test_release_is_stubbed_and_has_no_outputs():
    cells = _cells(RELEASE)
    text = json.dumps(cells)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert all(not c.get("outputs") and not c.get("execution_count") for c in cells if c["cell_type"] == "code")
    solution_cells = [c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")]
    assert len(solution_cells) == len(STAGES)
    assert all("raise NotImplementedError" in "".join(c["source"]) for c in solution_cells)


def test_release_is_in_sync_with_the_source(tmp_path):
    """`make release` on the committed source reproduces the committed release."""
    shutil.copytree(REPO / "solutions", tmp_path / "solutions")
    shutil.copy(REPO / "nbgrader_config.py", tmp_path)
    (tmp_path / "grading").mkdir()
    bin_dir = Path(sys.executable).parent  # nbgrader runs alembic from PATH
    subprocess.run([str(bin_dir / "nbgrader"), "generate_assignment", "ch03_attention", "--force",
                    "--log-level=ERROR"], cwd=tmp_path, check=True, capture_output=True,
                   env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    fresh = json.loads((tmp_path / "assignments" / "ch03_attention" / "ch03_attention.ipynb").read_text())
    committed = json.loads(RELEASE.read_text())
    assert fresh["cells"] == committed["cells"], "the release is out of date: run `make release` and commit it"


def test_solution_notebook_runs_top_to_bottom_in_a_real_kernel():
    """A fresh kernel, every cell in order, no error; each test cell reports its full points."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(SOLUTION, as_version=4)
    started = time.monotonic()
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    seconds = time.monotonic() - started
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors[0]
    for cell in nb.cells:
        grade = cell.metadata.get("nbgrader", {})
        if grade.get("grade"):
            # the report (display_data, text/plain beside the HTML) and the hidden run's line;
            # the last "x/y points" is the cell's score. No echoed number after it.
            shown = "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)
            scores = re.findall(r"(\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) points", shown)
            assert scores and float(scores[-1][0]) == float(scores[-1][1]) == grade["points"], (cell.source, shown)
            assert not [o for o in cell.outputs if o.output_type == "execute_result"], cell.source
    assert seconds < 60, f"the solution notebook took {seconds:.0f} s"


def test_layout_matches_the_design_card():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True).stdout.split()
    top = {path.split("/")[0] for path in tracked}
    allowed = {"assignments", "solutions", "autograder", "tests", "Makefile", "students.mk", "README.md", "pyproject.toml",
               "nbgrader_config.py", "constraints.txt", "docs", ".github", ".ci", ".gitignore"}  # config beside them
    assert top <= allowed, top - allowed


def test_cli_usage_errors_are_plain(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", str(SOLUTION), "--stage", "99"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and "no stage" in proc.stderr and "Traceback" not in proc.stderr
