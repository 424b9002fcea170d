"""Issue 15: the Gradescope bundle tested as Gradescope runs it.

The zip's own setup.sh builds its virtual environment (in a temporary /autograder, the folder
above the script's, where it skips apt-get; torch from the local wheels pip finds
here instead of PyTorch's CPU index), and the zip's run_autograder grades the solutions in
it: full marks with no cell error. The development venv never takes part, so a dependency that
setup.sh forgets (matplotlib) fails this test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from support import REPO, SOLUTION

from autograder.chapters.ch03_attention import CHAPTER
from autograder.frontends.hosted import gradescope

pytestmark = pytest.mark.slow  # minutes: make check-slow (docs/maintainers.md)


def test_setup_sh_venv_grades_the_solutions_full_marks(tmp_path):
    bundle = gradescope.build(tmp_path / "bundle.zip")
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    (root / "noindex").mkdir()  # an empty index: pip takes torch from its configured local wheels
    python_bin = Path(sys.base_prefix) / "bin"  # python3 of the interpreter the tests run on (torch has a wheel for it)
    env = {"PATH": f"{python_bin}{os.pathsep}/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path)),  # pip config
           "TORCH_INDEX_URL": (root / "noindex").as_uri(),
           **{k: v for k, v in os.environ.items() if k.startswith("PIP_")}}
    started = time.monotonic()
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root, env=env,
                           capture_output=True, text=True, timeout=900)
    print(f"setup.sh: {time.monotonic() - started:.0f} s")
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    venv_python = root / "venv" / "bin" / "python"
    assert subprocess.run([venv_python, "-c", "import nbgrader"], capture_output=True).returncode != 0, \
        "the bundle's venv is the students' kind of install, without the instructor's tools"

    (root / "submission").mkdir()
    shutil.copy(SOLUTION, root / "submission" / "ch03_attention.ipynb")
    run_env = {k: v for k, v in env.items() if k != "TORCH_INDEX_URL"}  # run_autograder uses $root/venv/bin/python
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")  # as Gradescope does
    started = time.monotonic()
    run = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, env=run_env,
                         capture_output=True, text=True, timeout=600)
    print(f"run_autograder: {time.monotonic() - started:.0f} s")
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    shown = results.get("output", "") + run.stdout
    assert results["score"] == CHAPTER.max_score, shown
    assert "raised errors" not in shown and "ModuleNotFoundError" not in shown, shown
    assert "with -v" not in shown and "V=1" not in shown, "no flag a Gradescope student cannot pass"
    assert str(REPO) not in shown
