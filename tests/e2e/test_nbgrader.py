"""Issue 4: instructors grade a class with nbgrader, end to end.

The end-to-end tests build a temporary course from this repository (sources, config,
Makefile) and run the real commands in it: make release, then five simulated students (two of them
brought in from an LMS download with nbgrader zip_collect), make autograde JOBS=2, make
feedback, make export, with real nbgrader and real kernels.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from support import RELEASE, REPO, SOLUTION, link_venv, run_grader
from tools import simulated_course

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.checks import CheckStatus
from autograder.frontends.instructors.nbgrader.stages import csv_column, hidden_seeds, stage_cells
from autograder.frontends.students import notebook

STAGES = CHAPTER.stages

ASSIGNMENT = "ch03_attention"
# The stages nbgrader grades (the course's total); the bonus stage's test cell is not a grade cell.
GRADED = [s for s in STAGES if not s.bonus]
FULL = {s.grade_id: float(CHAPTER.points(s)) for s in GRADED}
BONUS = sum(CHAPTER.points(s) for s in STAGES if s.bonus)  # 0 in a course without one
STAGE1_POINTS = CHAPTER.points(CHAPTER.stage(1))


def _source_seeds() -> dict[int, list[int]]:
    nb = nbformat.read(SOLUTION, as_version=4)
    return {stage.number: hidden_seeds(nb.cells[i].source, stage) for i, stage in stage_cells(nb, CHAPTER).items()
            if not stage.bonus}


# -- hidden tests -----------------------------------------------------------------------------

def test_every_stage_has_hidden_tests_that_the_release_lacks():
    seeds = _source_seeds()
    assert sorted(seeds) == [s.number for s in GRADED]
    assert all(len(found) == 1 for found in seeds.values()), seeds
    release = RELEASE.read_text()
    assert "HIDDEN" not in release and "hidden_seed" not in release
    assert not any(str(found[0]) in release for found in seeds.values())
    released = nbformat.read(RELEASE, as_version=4)
    for index, stage in stage_cells(released, CHAPTER).items():
        assert bool(released.cells[index].metadata.nbgrader.get("grade")) != stage.bonus
        assert released.cells[index].source.endswith(f'grade_stage("{CHAPTER.id}", {stage.number}, globals())')


def test_a_check_that_never_reads_the_seed_repeats_its_visible_run_request_for_request():
    """A hidden run skips the checks that did not read the examples seed (engine.run_stage notes
    each read). That is sound only if such a check asks the submission exactly the same on
    another seed: checked here, request by request, for every graded check on a correct
    submission; and a check that reads the seed must ask something else."""
    import runpy

    from autograder.core.engine import run_stage
    from autograder.core.submission import LocalTransport, Submission
    from autograder.sandbox import wire

    namespace = runpy.run_path(str(REPO / "tests" / "catalog" / "correct" / "book_style.py"))

    class Recording(LocalTransport):
        def __init__(self):
            super().__init__(namespace)
            self.asked = []

        def request(self, req):
            self.asked.append(wire.encode(req))
            return super().request(req)

    seed, independent, dependent = _source_seeds()[1][0], [], []
    for stage in GRADED:
        for check in CHAPTER.checks_for(stage):
            runs = {}
            for examples_seed in (None, seed):
                transport = Recording()
                result = run_stage(CHAPTER, stage, Submission(transport, stage.label), examples_seed=examples_seed,
                                   only=frozenset({check.id}))
                assert [c.status for c in result.checks] == [CheckStatus.PASSED], (check.id, result.checks)
                runs[examples_seed] = (transport.asked, result.checks[0].seed_dependent)
            (visible, reads), (hidden, _) = runs[None], runs[seed]
            (dependent if reads else independent).append(check.id)
            if reads:
                assert visible != hidden, f"{check.id} reads the seed but asks the same on another one"
            else:
                assert visible == hidden, f"{check.id} draws other examples without reading the seed"
    assert independent and len(dependent) > len(independent), (independent, dependent)


def test_hidden_tests_catch_a_submission_fitted_to_the_visible_examples(capsys):
    """A softmax that is right only on the inputs the visible checks use scores full marks on
    them, and loses points in the hidden block of the instructor's cell."""
    import torch

    seen_shapes = set()

    def softmax(x, dim):  # written out: the call policy refuses torch.softmax in stage 1
        return torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True)

    def recording(x):
        seen_shapes.add(tuple(x.shape))
        return softmax(x, -1)

    notebook.grade_stage(CHAPTER.id, 1, {"softmax_naive": recording})

    def fitted(x):
        return softmax(x, -1) if tuple(x.shape) in seen_shapes else softmax(x, 0)

    namespace = {"softmax_naive": fitted}
    capsys.readouterr()
    assert notebook.grade_stage(CHAPTER.id, 1, namespace) == STAGE1_POINTS
    score = notebook.grade_stage(CHAPTER.id, 1, namespace, hidden_seed=_source_seeds()[1][0])
    assert score < STAGE1_POINTS
    printed = capsys.readouterr().out
    assert notebook.HIDDEN_FAILURE in printed and str(seen_shapes) not in printed


def test_make_autograde_passes_jobs():
    dry = subprocess.run(["make", "-n", "autograde", "JOBS=3"], cwd=REPO, capture_output=True, text=True)
    assert re.search(r"-m autograder autograde ch03_attention --jobs '?3'?(\s|$)", dry.stdout, re.M), dry.stdout
    assert "--student" not in dry.stdout and "--verbose" not in dry.stdout
    dry = subprocess.run(["make", "-n", "autograde"], cwd=REPO, capture_output=True, text=True)
    assert "--jobs" not in dry.stdout  # the default is the number of cores (commands.default_jobs)
    dry = subprocess.run(["make", "-n", "autograde", "STUDENT=doejane", "V=1"], cwd=REPO, capture_output=True, text=True)
    assert re.search(r"--student doejane\s+--verbose", dry.stdout), dry.stdout


# -- the end-to-end course -------------------------------------------------------------------

STUDENTS = ("blank", "perfect", "mistake3", "broken2", "robust", "attacker")
PLANTED = "zz_autograder_attack.pth"  # what the attacker tries to leave in the venv
CELL_LIMIT = 10  # seconds; the course's own limit is 60 (nbgrader_config.py)


CLAIMED = f"{CHAPTER.points(CHAPTER.stage(7)):g}"  # stage 7's full marks, as the robust student's edited cell claims them


def _robust(release: dict, solution: dict) -> dict:
    """Stages 1-6 done; a UserWarning from its softmax; stage 3's test cell deleted; stage 7
    not done but its test cell edited to claim full marks; a last cell that never ends. (It
    is also handed in with a stray torch.py and autograder.py.)"""
    nb = simulated_course.student_notebook(release, solution, done={1, 2, 3, 4, 5, 6})
    cells = nb["cells"]
    for cell in cells:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id == "stage1_softmax_solution":
            cell["source"] = "import warnings\n" + cell["source"].replace(
                "    exp_x = torch.exp(x)", '    warnings.warn("softmax_naive: a UserWarning from student code")\n'
                "    exp_x = torch.exp(x)")
            assert "warnings.warn" in cell["source"]
        if grade_id == "test_stage7_gpt2":
            cell["source"] = f"print('Stage 7 (gpt2): {CLAIMED}/{CLAIMED} points')\n{CLAIMED}"
    nb["cells"] = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") != "test_stage3_self_attention"]
    nb["cells"].append(nbformat.v4.new_code_cell("while True:\n    pass"))
    return nb


ATTACKS = """
import glob, json, os, sqlite3, sys, time
COURSE = {course!r}
tried = {{}}
try:  # another student's manual score, which persists across regrades
    db = sqlite3.connect(COURSE + "/grading/gradebook.db")
    db.execute("update grade set manual_score = max_score")
    db.commit()
    tried["gradebook"] = "written"
except Exception as exc:
    tried["gradebook"] = type(exc).__name__
try:  # a hook that the next grading process would run
    site = next(p for p in sys.path if p.endswith("site-packages"))
    with open(os.path.join(site, {planted!r}), "w") as handle:
        handle.write("import os; os.environ['AUTOGRADER_PLANTED'] = '1'\\n")
    tried["venv"] = "written"
except Exception as exc:
    tried["venv"] = type(exc).__name__
try:
    open(COURSE + "/solutions/ch03_attention/ch03_attention.ipynb").read()
    tried["solutions"] = "read"
except Exception as exc:
    tried["solutions"] = type(exc).__name__
if os.fork() == 0:  # a daemon that rewrites every executed notebook it finds to claim full marks
    os.setsid()
    give_up = time.time() + 300
    while time.time() < give_up:
        for path in glob.glob("/tmp/**/*.ipynb", recursive=True) + glob.glob(COURSE + "/grading/**/*.ipynb", recursive=True):
            try:
                text = open(path).read()
                open(path, "w").write(text.replace('"text/plain": "0"', '"text/plain": "100"'))
            except Exception:
                pass
        time.sleep(0.05)
    os._exit(0)
print("ATTACKS:", json.dumps(tried, sort_keys=True))
"""


def _attacker(release: dict, course: Path) -> dict:
    """A blank notebook whose first cell attacks what a kernel with the instructor's rights
    could reach: the gradebook, the venv, the solutions, the executed notebooks."""
    nb = json.loads(json.dumps(release))
    nb["cells"].insert(1, nbformat.v4.new_code_cell(ATTACKS.format(course=str(course), planted=PLANTED)))
    return nb


def _submissions() -> dict[str, dict]:
    release, solution = json.loads(RELEASE.read_text()), json.loads(SOLUTION.read_text())
    return {
        "blank": release,                       # the untouched release
        "perfect": solution,                    # the instructor's notebook itself
        "mistake3": simulated_course.student_notebook(release, solution, mistake=3),  # stage 3 unscaled
        "broken2": simulated_course.student_notebook(release, solution, broken=2),    # a syntax error in stage 2
        "robust": _robust(release, solution),
    }


def _make(course: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The repository's Makefile, run in the course, with this test's Python environment."""
    link_venv(course)
    proc = subprocess.run(["make", "--no-print-directory", *args, f"STAMP={course / '.stamp'}"],
                          cwd=course, capture_output=True, text=True, timeout=timeout,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")} | {"COLUMNS": "120"})
    assert proc.returncode == 0, f"make {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _course(root: Path) -> Path:
    course = root / "course"
    course.mkdir()
    for name in ("Makefile", "students.mk", "nbgrader_config.py", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, course)
    shutil.copytree(REPO / "solutions", course / "solutions", ignore=shutil.ignore_patterns(".*"))
    # A shorter per-cell limit keeps the looping student quick; every other cell, the
    # GPT-2 stage's included, still has to fit in it.
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.SandboxExecute.cell_timeout = {CELL_LIMIT}\n")
    (course / ".stamp").touch()  # the environment is this test's; make must not install one
    return course


def _submit(course: Path, student: str, notebook_json: dict, extra: dict[str, str] | None = None) -> None:
    folder = course / "grading" / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook_json, indent=1))
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)


def _lms_download(course: Path, notebooks: dict[str, dict]) -> None:
    """A Canvas zip, collected as the README says."""
    import zipfile

    archive = course / "grading" / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zipped:
        for number, (student, nb) in enumerate(notebooks.items()):
            late = "LATE_" if number % 2 else ""
            zipped.writestr(f"{student}_{late}{1000 + number}_{2000 + number}_{ASSIGNMENT}-1.ipynb", json.dumps(nb))
    simulated_course.nbgrader(course, "zip_collect", ASSIGNMENT)
    for student in notebooks:
        assert (course / "grading" / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()


STRAYS = {"torch.py": "raise ImportError('the stray torch.py was imported')\n",
          "autograder.py": "raise ImportError('the stray autograder.py was imported')\n"}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    steps, started = [], time.monotonic()
    course = _course(tmp_path_factory.mktemp("nbgrader"))
    _make(course, "release")
    submissions = _submissions()
    _lms_download(course, {"blank": submissions["blank"], "perfect": submissions["perfect"]})
    submissions["attacker"] = _attacker(submissions["blank"], course)
    for student in ("mistake3", "broken2", "robust", "attacker"):
        _submit(course, student, submissions[student], STRAYS if student == "robust" else None)
    # a copy for plain serial nbgrader, before anything is autograded
    shutil.copytree(course, course.parent / "serial", symlinks=True)
    steps.append(("release", time.monotonic()))
    autograde = _make(course, "autograde", "JOBS=2")
    steps.append(("autograde", time.monotonic()))
    _make(course, "feedback")
    steps.append(("feedback", time.monotonic()))
    _make(course, "export")
    steps.append(("export", time.monotonic()))
    times = [f"{name} {end - start:.0f} s" for (name, end), start in zip(steps, [started] + [t for _, t in steps])]
    print(f"\nthe course: {', '.join(times)}")
    return course, autograde.stdout, submissions


def _grades(course: Path) -> dict[str, dict[str, str]]:
    with open(course / "grading" / "grades.csv", newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def _stage_scores(row: dict[str, str]) -> dict[str, float]:
    assert not any(csv_column(s) in row for s in STAGES if s.bonus)
    return {s.grade_id: float(row[csv_column(s)]) for s in GRADED}


def _autograded(course: Path, student: str) -> nbformat.NotebookNode:
    return nbformat.read(course / "grading" / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                         as_version=4)


@pytest.mark.slow
def test_export_has_each_students_stage_scores_and_total(course):
    root, autograde_output, _ = course
    assert f"Autograded {len(STUDENTS)}/{len(STUDENTS)} submissions" in autograde_output, autograde_output
    grades = _grades(root)
    assert sorted(grades) == sorted(STUDENTS)
    expected = {
        "blank": {s.grade_id: 0.0 for s in GRADED},
        "perfect": FULL,
        "broken2": {**FULL, "test_stage2_scores": 0.0},
        "robust": {**FULL, "test_stage7_gpt2": 0.0},
        "attacker": {s.grade_id: 0.0 for s in GRADED},
    }
    for student, stages in expected.items():
        assert _stage_scores(grades[student]) == stages, student
        # stage 8's bonus is extra credit beside the stages' score (the solutions earn all of it)
        assert float(grades[student]["score"]) == sum(stages.values()), student
        assert float(grades[student]["raw_score"]) == sum(stages.values()) + float(grades[student]["extra_credit"]), student
    assert float(grades["perfect"]["extra_credit"]) == BONUS and grades["blank"]["extra_credit"] == "0"
    wrong = _stage_scores(grades["mistake3"])
    assert 0 < wrong["test_stage3_self_attention"] < FULL["test_stage3_self_attention"]
    assert wrong == {**FULL, "test_stage3_self_attention": wrong["test_stage3_self_attention"]}
    assert float(grades["mistake3"]["score"]) == sum(wrong.values())
    assert all(row["max_score"] == f"{CHAPTER.max_score:g}" for row in grades.values())


@pytest.mark.slow
def test_nbgrader_scores_equal_the_cli_scores(course, tmp_path, graded_release, graded_solution):
    """One engine: each test cell's score in the gradebook is the CLI's score of that stage."""
    root, _, submissions = course
    grades = _grades(root)
    runs = {"blank": graded_release, "perfect": graded_solution}  # the same notebooks, graded once per session
    for student in ("mistake3", "broken2"):
        path = tmp_path / f"{student}.ipynb"
        path.write_text(json.dumps(submissions[student]))
        runs[student] = run_grader(path, tmp_path)
    for student, run in runs.items():
        cli = {s.grade_id: sum(t["score"] for t in run.results["tests"] if t["number"].split(".")[0] == str(s.number))
               for s in GRADED}
        assert _stage_scores(grades[student]) == cli, student


@pytest.mark.slow
def test_test_cells_show_the_sandboxed_grade_with_hidden_examples(course):
    root, _, _ = course
    autograded = _autograded(root, "mistake3")
    cells = stage_cells(autograded, CHAPTER)
    assert sorted(s.number for s in cells.values()) == [s.number for s in STAGES]
    for index, stage in cells.items():  # the bonus stage's too, though nbgrader does not grade it
        outputs = autograded.cells[index].outputs
        assert [o.output_type for o in outputs] == ["stream", "execute_result"]
        assert outputs[0].name == "stdout" and outputs[0].text.startswith(f"{stage.label}: ")
        hidden = "on the visible and on hidden examples" in outputs[0].text
        assert hidden == (not stage.bonus) == ("hidden_seed" in autograded.cells[index].source)
    stage3 = next(i for i, s in cells.items() if s.number == 3)
    assert "✗" in autograded.cells[stage3].outputs[0].text


@pytest.mark.slow
def test_feedback_shows_no_hidden_tests(course):
    root, _, _ = course
    seeds = {str(found[0]) for found in _source_seeds().values()}
    for student in STUDENTS:
        html = (root / "grading" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
        assert "HIDDEN TESTS" not in html and "hidden_seed" not in html, student
        assert not any(seed in html for seed in seeds), student
        assert "graded by the course autograder in a separate process" in html


@pytest.mark.slow
def test_stray_modules_are_not_copied_and_not_imported(course):
    root, _, _ = course
    folder = root / "grading" / "autograded" / "robust" / ASSIGNMENT
    # the notebook, and the release's forwarding Makefile (make test from the notebook's folder); no Python file
    assert sorted(p.name for p in folder.iterdir()) == sorted([f"{ASSIGNMENT}.ipynb", "Makefile"])
    cells = [c for c in _autograded(root, "robust").cells if c.cell_type == "code"]
    # the Colab setup cell (a no-op where the grader is installed) and the imports run cleanly
    imports = next(i for i, c in enumerate(cells) if "import torch" in c.source)
    assert not any(o.output_type == "error" for c in cells[:imports + 1] for o in c.outputs)
    assert "stray" not in json.dumps([c.outputs for c in cells])


@pytest.mark.slow
def test_a_user_warning_on_stderr_does_not_zero_a_stage(course):
    root, _, _ = course
    printed = [o.text for c in _autograded(root, "robust").cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "stream" and o.name == "stderr"]
    assert any("UserWarning: softmax_naive: a UserWarning from student code" in text for text in printed)
    assert float(_grades(root)["robust"][csv_column(GRADED[0])]) == CHAPTER.points(GRADED[0])


@pytest.mark.slow
def test_deleted_and_edited_test_cells_are_restored_and_graded(course):
    root, _, _ = course
    autograded = _autograded(root, "robust")
    sources = {s.number: autograded.cells[i].source for i, s in stage_cells(autograded, CHAPTER).items()}
    assert sorted(sources) == [s.number for s in STAGES]
    assert "was missing from the submission" in sources[3]
    assert sources[7].rstrip().endswith("### END HIDDEN TESTS") and f"{CLAIMED}/{CLAIMED}" not in sources[7]


@pytest.mark.slow
def test_a_looping_cell_is_stopped_and_the_rest_still_graded(course):
    root, _, _ = course
    last = _autograded(root, "robust").cells[-1]
    assert last.source.startswith("while True")
    assert any(o.output_type == "error" for o in last.outputs), last.outputs


@pytest.mark.slow
def test_make_autograde_writes_what_serial_nbgrader_writes(course):
    """Plain serial `nbgrader autograde` on the same submissions: the same gradebook rows and
    the same test cell outputs."""
    root, _, _ = course
    serial = root.parent / "serial"
    compared = ("mistake3", "broken2")
    for student in STUDENTS:
        if student not in compared:
            shutil.rmtree(serial / "grading" / "submitted" / student)
    subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "autograde", ASSIGNMENT, "--log-level=ERROR"],
                   cwd=serial, env=simulated_course.nbgrader_env(), check=True, capture_output=True, timeout=600)
    serial_rows, parallel_rows = simulated_course.gradebook_rows(serial), simulated_course.gradebook_rows(root)
    assert serial_rows == {k: v for k, v in parallel_rows.items() if k[0] in compared}
    for student in compared:
        ours, theirs = _autograded(root, student), _autograded(serial, student)
        assert [c.source for c in ours.cells] == [c.source for c in theirs.cells]
        for index in stage_cells(ours, CHAPTER):
            assert ours.cells[index].outputs == theirs.cells[index].outputs


@pytest.mark.slow
def test_kernel_attacks_earn_nothing_and_change_nothing(course):
    """Issue 11: no kernel runs the notebook. The attacker's code ran in the confined worker,
    where the gradebook, the venv and the solutions are out of reach, and its daemon could
    not touch what nbgrader recorded: 0 points, no manual score anywhere, no planted file."""
    import sysconfig

    root, _, _ = course
    assert float(_grades(root)["attacker"]["score"]) == 0
    printed = "".join(o.get("text", "") for c in _autograded(root, "attacker").cells if c.cell_type == "code"
                      for o in c.outputs)
    tried = json.loads(printed.split("ATTACKS:", 1)[1].splitlines()[0])
    assert tried["gradebook"] != "written" and tried["venv"] == "PermissionError"
    assert tried["solutions"] == "PermissionError"
    rows = simulated_course.gradebook_rows(root)
    assert all(value[1] is None for key, value in rows.items() if len(key) == 3), "a manual score was written"
    assert not (Path(sysconfig.get_paths()["purelib"]) / PLANTED).exists()
    feedback = (root / "grading" / "feedback" / "attacker" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "confinement: landlock" in feedback


def test_dropping_the_bonus_after_autograding_is_refused_before_anything_changes(course, tmp_path):
    """nbgrader cannot add or remove cells of a notebook with submissions: its generate_assignment
    failed halfway and deleted the release folder, after the course file and tables were rewritten.
    make release now asks the gradebook first and refuses, saying what to do; every file stays."""
    bonus = next((s for s in STAGES if s.bonus), None)
    if bonus is None:
        pytest.skip("this course has no bonus stage to drop")
    root = tmp_path / "course"
    shutil.copytree(course[0], root, symlinks=True)
    source = root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = json.loads(source.read_text())
    text = ["".join(c["source"]) for c in nb["cells"]]
    start = next(i for i, t in enumerate(text) if t.startswith(f"## {bonus.label}"))
    end = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == bonus.grade_id)
    del nb["cells"][start:end + 1]  # the bonus section, as docs/instructors/customize.md says
    source.write_text(json.dumps(nb, indent=1))
    course_file = CHAPTER.course_path.read_bytes()
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}

    link_venv(root)
    proc = subprocess.run(["make", "--no-print-directory", "release", f"STAMP={root / '.stamp'}"], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing changed" in proc.stderr and "submission" in proc.stderr and "make export" in proc.stderr
    assert bonus.grade_id in proc.stderr and "Traceback" not in proc.stderr
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before, "a file changed or went"
    assert CHAPTER.course_path.read_bytes() == course_file
