"""Issue 32: `make classroom50`'s autograder.py run as Classroom 50's runner runs it.

The stand-in (:func:`run_as_classroom50`) does what the runner's ``runner.py`` does around an
instructor's per-assignment ``autograder.py`` (foundation50/classroom50,
``cli/gh-teacher/skeleton/dotgithub/scripts/runner.py``): it deletes a ``result.json`` and
``release-body.md`` left in the checkout, runs ``python autograder.py`` with the student's
checkout as the working directory, the bundle's folder in ``CLASSROOM50_BUNDLE_DIR`` and the
submission's identity in the environment, then reads ``result.json`` and checks it by the
rules of the runner's and the score collector's ``validate_result`` (:func:`contract_errors`).
Not tried here: the real runner on GitHub's Actions (the Pages fetch, the release, the
collector), which needs GitHub.

The checkout is the students' repository as ``make student-repo`` builds it; no network but
the package registry (torch from pip's own configuration, as on this project's CI). The venv
autograder.py installs under ``$RUNNER_TEMP`` is made once (the first run) and reused by the
others, as it is for one bundle within one runner's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from leaks import answers, leaks
from support import REPO, SOLUTION

from autograder.chapters.ch03_attention import CHAPTER

pytestmark = pytest.mark.slow  # minutes: make check-slow (docs/maintainers.md)

# The course's numbers (whole points, as Classroom 50 records them): they follow an instructor's edits.
TOTAL = CHAPTER.max_score
BONUS_STAGES = [s for s in CHAPTER.stages if s.bonus]
BLANK_ROW = f"| 1 softmax | 0/{CHAPTER.points(CHAPTER.stage(1)):g} |"

RESULT_SCHEMA = "classroom50/result/v1"


def contract_errors(data, *, classroom: str, assignment: str, owner: str) -> list[str]:
    """Every rule of classroom50/result/v1 that ``data`` breaks (the runner's validate_result)."""
    def whole(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    if not isinstance(data, dict):
        return ["not a JSON object"]
    errors = []
    for key, want in (("schema", RESULT_SCHEMA), ("classroom", classroom), ("assignment", assignment),
                      ("owner", owner), ("assignment_type", "individual")):
        if data.get(key) != want:
            errors.append(f"{key} is {data.get(key)!r}, want {want!r}")
    if not str(data.get("submission", "")).startswith("submit/"):
        errors.append("submission is not a submit/* tag")
    errors += [f"{key} is not a non-empty string" for key in ("commit", "release", "review", "datetime")
               if not isinstance(data.get(key), str) or not data.get(key)]
    if not (whole(data.get("score")) and whole(data.get("max-score")) and data["score"] <= data["max-score"]):
        errors.append(f"score {data.get('score')!r} / max-score {data.get('max-score')!r}")
    tests = data.get("tests")
    if not isinstance(tests, list):
        return errors + ["tests is not a list"]
    for i, test in enumerate(tests):
        if not isinstance(test, dict) or not isinstance(test.get("test-name"), str) or not test["test-name"]:
            errors.append(f"tests[{i}] has no test-name")
        elif not isinstance(test.get("passed"), bool):
            errors.append(f"tests[{i}].passed is not a boolean")
        elif not (whole(test.get("score")) and whole(test.get("max-score")) and test["score"] <= test["max-score"]):
            errors.append(f"tests[{i}] score {test.get('score')!r} / {test.get('max-score')!r}")
    return errors


IDENTITY = {"CLASSROOM": "llm-fall26", "ASSIGNMENT": "ch03-attention", "ASSIGNMENT_TYPE": "individual",
            "USERNAME": "ada", "OWNER": "ada", "SUBMISSION_TAG": "submit/20261126T101500Z-1a2b3c4",
            "COMMIT_URL": "https://github.com/llm-fall26/llm-fall26-ch03-attention-ada/commit/1a2b3c4",
            "RELEASE_URL": "https://github.com/llm-fall26/llm-fall26-ch03-attention-ada/releases/tag/submit%2F2026",
            "REVIEW_URL": "https://github.com/llm-fall26/llm-fall26-ch03-attention-ada/compare/0f0f...1a2b"}


def run_as_classroom50(bundle: Path, checkout: Path, runner_temp: Path, *, runner_clears: bool = True
                       ) -> tuple[int, dict, str, str, str]:
    """The runner's steps around autograder.py; returns its exit status, result.json (or {}),
    release-body.md, $GITHUB_OUTPUT and the log. ``runner_clears=False`` skips the runner's
    own removal of stale outputs, to prove autograder.py's."""
    for name in ("result.json", "release-body.md") if runner_clears else ():
        (checkout / name).unlink(missing_ok=True)
    output = runner_temp / "github_output"
    output.write_text("")
    env = {"PATH": f"{Path(sys.base_prefix) / 'bin'}{os.pathsep}/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},  # pip's own configuration: the wheels
           **IDENTITY, "CLASSROOM50_BUNDLE_DIR": str(bundle), "GITHUB_OUTPUT": str(output),
           "GITHUB_STEP_SUMMARY": str(runner_temp / "summary.md"), "RUNNER_TEMP": str(runner_temp),
           "TORCH_INDEX_URL": ""}
    proc = subprocess.run([sys.executable, str(bundle / "autograder.py")], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=900)
    result = json.loads((checkout / "result.json").read_text()) if (checkout / "result.json").is_file() else {}
    body = (checkout / "release-body.md").read_text() if (checkout / "release-body.md").is_file() else ""
    return proc.returncode, result, body, output.read_text(), proc.stdout + proc.stderr


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    root = tmp_path_factory.mktemp("classroom50")
    bundle = root / "classroom50" / "llm-fall26" / "autograders" / "ch03-attention"
    built = make("classroom50", f"DEST={bundle}")
    assert built.returncode == 0, built.stdout + built.stderr
    template = root / "template"
    made = make("student-repo", f"DEST={template}")
    assert made.returncode == 0, made.stdout + made.stderr
    runner_temp = root / "runner-temp"
    runner_temp.mkdir()
    return bundle, template, runner_temp, built.stdout


def checkout_of(template: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(template), str(where)], check=True, capture_output=True)
    return where


def test_the_folder_packs_under_ten_megabytes_without_answers(classroom, tmp_path):
    bundle, _, _, said = classroom
    from autograder.frontends.hosted.classroom50 import GRADER_FOLDER

    shipped = bundle / GRADER_FOLDER
    assert (shipped / "autograder" / "frontends").is_dir() and not (shipped / "tests").exists(), "no demo or bench code"
    archive = tmp_path / "ch03-attention.tar.gz"  # as Classroom 50's publish step packs the folder
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(bundle, arcname=".")
    assert archive.stat().st_size <= 10 * 1024 * 1024
    assert "KiB packed" in said
    names = [p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()]
    assert "autograder.py" in names and "grader/pyproject.toml" in names and "grader/constraints.txt" in names
    assert not [n for n in names if "hidden" in n], "no hidden-examples seed in a bundle anyone may read"
    assert leaks(bundle, answers()) == []


def test_blank_then_solutions_then_forgeries(classroom, tmp_path):
    """The blank notebook 0 points, the solutions full marks (a renamed copy), and two forgeries
    that stay 0: a result.json the student committed, and one the notebook's code writes."""
    bundle, template, runner_temp, _ = classroom
    who = {"classroom": IDENTITY["CLASSROOM"], "assignment": IDENTITY["ASSIGNMENT"], "owner": IDENTITY["OWNER"]}

    blank = checkout_of(template, tmp_path / "blank")
    status, result, body, output, log = run_as_classroom50(bundle, blank, runner_temp)
    assert status == 0, log
    assert contract_errors(result, **who) == [], result
    assert (result["score"], result["max-score"]) == (0, TOTAL)
    assert "status=failure" in output and "summary=" in output
    assert BLANK_ROW in body and "Confinement" in body and "landlock" in body

    solved = checkout_of(template, tmp_path / "solved")
    release = solved / "assignments" / "ch03_attention" / "ch03_attention.ipynb"
    release.unlink()
    shutil.copy(SOLUTION, release.with_name("Copy of ch03_attention (1).ipynb"))  # found as every route finds it
    status, result, body, output, log = run_as_classroom50(bundle, solved, runner_temp)
    assert status == 0, log
    assert contract_errors(result, **who) == [], result
    assert (result["score"], result["max-score"]) == (TOTAL, TOTAL), body
    bonus = [t for t in result["tests"] if "bonus" in t["test-name"]]
    assert [(t["score"], t["max-score"]) for t in bonus] == [(CHAPTER.points(s), CHAPTER.points(s)) for s in BONUS_STAGES], \
        "the bonus shows, outside the score"
    assert sum(t["max-score"] for t in result["tests"] if t not in bonus) == result["max-score"]
    assert "status=success" in output
    assert "Copy of ch03_attention (1).ipynb" in body

    forged = {"schema": RESULT_SCHEMA, **who, "assignment_type": "individual", "submission": IDENTITY["SUBMISSION_TAG"],
              "commit": "c", "release": "r", "review": "r", "datetime": "2026-11-26T10:00:00Z", "score": 100,
              "max-score": 100, "tests": [{"test-name": "all", "passed": True, "score": 100, "max-score": 100}]}
    # One checkout, both forgeries: a result.json and release-body.md the student committed, and
    # a notebook cell that writes result.json wherever it can while it is graded.
    forger = checkout_of(template, tmp_path / "forger")
    (forger / "result.json").write_text(json.dumps(forged))
    (forger / "release-body.md").write_text("# 100/100, well done")
    notebook = forger / "assignments" / "ch03_attention" / "ch03_attention.ipynb"
    data = json.loads(notebook.read_text())
    attack = ("import json, os\n"
              f"for target in [{str(forger / 'result.json')!r}, 'result.json', os.path.expanduser('~/result.json')]:\n"
              "    try:\n"
              f"        open(target, 'w').write({json.dumps(json.dumps(forged))})\n"
              "    except OSError as exc:\n"
              "        print('refused', target, exc)\n")
    data["cells"].insert(1, {"cell_type": "code", "metadata": {}, "source": attack, "outputs": [], "execution_count": None})
    notebook.write_text(json.dumps(data))
    git = ["git", "-C", str(forger), "-c", "user.name=Ada", "-c", "user.email=ada@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "my grade"], check=True)
    # The runner deletes a committed result.json before autograder.py runs; autograder.py does
    # too, which this run proves by skipping the runner's clean-up.
    status, result, body, _, log = run_as_classroom50(bundle, forger, runner_temp, runner_clears=False)
    assert status == 0, log
    assert contract_errors(result, **who) == []
    assert result["score"] == 0 and all(t["test-name"] != "all" for t in result["tests"]), result
    assert "well done" not in body and BLANK_ROW in body
