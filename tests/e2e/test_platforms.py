"""Where students run the grader (issue 17), end to end: the portable fallback graded through
the CLI, Colab simulated by a fresh venv that has PyTorch but not the grader, the grader
installed beside an existing torch, and a checkout under an odd path. Slow: each builds
venvs or grades whole notebooks (the fast part is tests/unit/sandbox/test_oslayer.py)."""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from support import RELEASE, REPO, SOLUTION, run_grader, total_words

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends.hosted import gradescope
from autograder.sandbox.settings import SOURCES

HOSTILE = REPO / "tests" / "hostile"
PIN = gradescope.torch_pin()


# --- Windows and macOS: the portable fallback, forced here ------------------------------------

@pytest.mark.parametrize("submission, score, bonus, code", [
    (RELEASE, 0, 0, 1),
    (SOLUTION, None, None, 0),  # full marks: the course's maximum and bonus
    (HOSTILE / "exits_inside_stages.py", 9, 0, 1),  # a stage that ends the worker costs that stage only
], ids=["blank", "solutions", "exits_inside_stages"])
def test_the_portable_fallback_grades_like_linux_and_says_unconfined(tmp_path, submission, score, bonus, code):
    proc = run_grader(submission, tmp_path, env={SOURCES["portable"][1]: "1"})
    results = proc.results
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert total_words(CHAPTER, score, bonus) in proc.stdout, proc.stdout
    assert "confinement:" not in proc.stdout  # the fences are named with -v only (make test V=1)
    assert results["score"] == (CHAPTER.max_score if score is None else score)
    assert results["extra_data"]["confinement"] == "unconfined"


# --- PyTorch: the range, the pin, Colab -------------------------------------------------------

def test_makes_venv_has_exactly_the_pinned_cpu_torch():
    version = importlib.metadata.version("torch")
    assert version.split("+")[0] == PIN and "cu" not in version.split("+")[-1], version


def _torch_files_digest(python: Path) -> str:
    """The installed torch's RECORD: any reinstall or upgrade changes it."""
    where = subprocess.run([str(python), "-c", "import importlib.metadata as m; d = m.distribution('torch'); "
                            "print(d.version); print(d.read_text('RECORD'))"],
                           capture_output=True, text=True, check=True).stdout
    return hashlib.sha256(where.encode()).hexdigest()


@pytest.fixture(scope="module")
def colab(tmp_path_factory) -> Path:
    """A venv holding what Colab has (torch, matplotlib, ipykernel) and not the grader."""
    root = tmp_path_factory.mktemp("colab")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"torch=={PIN}", "matplotlib", "ipykernel"], check=True, timeout=900)
    subprocess.run([str(python), "-m", "ipykernel", "install", "--prefix", str(venv), "--name", "colab"],
                   check=True, capture_output=True, timeout=120)
    assert subprocess.run([str(python), "-c", "import autograder"], capture_output=True, cwd=root).returncode != 0
    return python


@pytest.mark.slow
def test_installing_the_grader_beside_a_supported_torch_installs_no_torch(colab, tmp_path):
    report = tmp_path / "report.json"
    proc = subprocess.run([str(colab), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--dry-run",
                           "--report", str(report), str(REPO)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    installs = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert "ch03-attention-autograder" in installs and "torch" not in installs, installs
    assert not {name for name in installs if name.startswith("nvidia")}


@pytest.mark.slow
def test_colab_setup_cell_installs_the_grader_and_every_test_cell_reports(colab, tmp_path, monkeypatch):
    """The release notebook in a Colab-like kernel: the setup cell installs the grader from
    AUTOGRADER_INSTALL_SOURCE (this checkout), torch stays as it was, every test cell prints
    its stage's rows."""
    from nbclient import NotebookClient

    before = _torch_files_digest(colab)
    monkeypatch.setenv("JUPYTER_PATH", str(colab.parent.parent / "share" / "jupyter"))
    monkeypatch.setenv("AUTOGRADER_INSTALL_SOURCE", str(REPO))
    workdir = tmp_path / "content"  # Colab's folder: nothing of the grader's beside the notebook
    workdir.mkdir()
    nb = nbformat.read(RELEASE, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="colab", allow_errors=True,
                   resources={"metadata": {"path": str(workdir)}}).execute()
    setup = next(c for c in nb.cells if c.cell_type == "code" and "GRADER_SOURCE" in c.source)
    assert setup.outputs == [], setup.outputs  # quiet when the install works
    test_cells = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "").startswith("test_")]
    assert len(test_cells) == 8
    for cell in test_cells:
        number = re.search(r"grade_stage\(\"ch03_attention\", (\d+)", cell.source).group(1)
        text = json.dumps(cell.outputs)
        assert "ModuleNotFoundError" not in text and f"Stage {number} (" in text, text[:2000]
    assert _torch_files_digest(colab) == before
    shown = subprocess.run([str(colab), "-m", "pip", "show", "ch03-attention-autograder"], capture_output=True, text=True)
    assert shown.returncode == 0 and "Location:" in shown.stdout


# --- any folder, any file name ------------------------------------------------------------------

def _copy_checkout(dest: Path) -> None:
    """The working tree as git sees it (tracked and untracked, ignored files aside), times kept."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = REPO / relative
        if source.is_file():
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / relative)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None or not (REPO / ".venv" / ".installed").exists(),
                    reason="needs make and the instructor venv (make venv)")
def test_a_checkout_under_an_odd_path_runs_every_make_target(tmp_path):
    odd = tmp_path / "My Courses (2027)" / "Übung 3" / ("it's a \"long\" path " * 6)[:100] / "ch03"
    assert len(str(odd)) > 120
    odd.mkdir(parents=True)
    _copy_checkout(odd)
    # The instructor venv, reached through the odd path: its bin folder's path holds every odd
    # character (make's abspath used to split it). Its stamps are newer than the copied files.
    (odd / ".venv").symlink_to(REPO / ".venv", target_is_directory=True)
    env = {**os.environ, "COLUMNS": "200"}

    def make(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
        return subprocess.run(["make", "--no-print-directory", "-o", ".venv/.student", "-o", ".venv/.installed", *args],
                              cwd=odd, capture_output=True, text=True, timeout=timeout, env=env)

    copy = odd / "Copy of ch03_attention.ipynb"
    shutil.copy(SOLUTION, copy)
    graded = make("test", f"NOTEBOOK={copy.name}", "STAGE=1")
    points = CHAPTER.points(CHAPTER.stage(1))
    assert f"Total: {points:g}/{points:g}" in graded.stdout, graded.stdout + graded.stderr

    second_download = odd / "ch03_attention (1).ipynb"
    shutil.copy(RELEASE, second_download)
    reports = "build/ci (1)"
    ci = make("ci-grade", f"NOTEBOOK={second_download.name}", f"CI_REPORTS={reports}")
    assert ci.returncode == 0, ci.stdout + ci.stderr
    assert json.loads((odd / reports / "results.json").read_text())["score"] == 0

    for student, notebook in (("ada", SOLUTION), ("bob", RELEASE)):
        folder = odd / "grading" / "submitted" / student / "ch03_attention"
        folder.mkdir(parents=True)
        shutil.copy(notebook, folder / "ch03_attention.ipynb")
    autograde = make("autograde", "JOBS=2", timeout=1200)
    assert autograde.returncode == 0, autograde.stdout[-3000:] + autograde.stderr[-3000:]
    exported = make("export")
    assert exported.returncode == 0, exported.stdout + exported.stderr
    with open(odd / "grading" / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    # the solution earns the 100 points and stage 8's bonus as nbgrader's extra credit beside them
    bonus = sum(CHAPTER.points(s) for s in CHAPTER.stages if s.bonus)
    assert float(rows["ada"]["extra_credit"]) == bonus > 0, rows
    assert float(rows["ada"]["score"]) == CHAPTER.max_score and float(rows["bob"]["score"]) == 0, rows


# --- paths with spaces, parentheses, quotes, non-ASCII ---------------------------------------

ODD_NAMES = ["Copy of ch03_attention.ipynb", "ch03_attention (1).ipynb", "Übung 3/it's \"mine\" a&b;(x).ipynb"]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
@pytest.mark.parametrize("name", ODD_NAMES)
def test_make_passes_any_notebook_name_as_one_argument(name):
    """make -n prints the commands: each path arrives as one shell word, byte for byte."""
    for target, command in (("test", "grade"), ("ci-grade", "ci")):
        proc = subprocess.run(["make", "-n", "--no-print-directory", target, f"NOTEBOOK={name}",
                               f"CI_REPORTS=build/odd ({name[:4]})"],
                              cwd=REPO, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        line = next(ln for ln in proc.stdout.replace("\\\n", " ").splitlines() if f"-m autograder {command} " in ln)
        words = shlex.split(line.lstrip("@"))
        assert words[words.index(command) + 1] == name
        if target == "ci-grade":
            assert words[words.index("--results") + 1] == f"build/odd ({name[:4]})/results.json"
