"""Gradescope: ``build`` packs the autograder zip; ``run`` grades a submission inside it and always
leaves results.json."""

from __future__ import annotations

import argparse
import json
import re
import secrets
import zipfile
from pathlib import Path

from autograder import CHECKOUT
from autograder.chapters import DEFAULT, load
from autograder.frontends import finder
from autograder.frontends.fingerprint import grader_bundle
from autograder.frontends.reports.results_json import gradescope_json
from autograder.frontends.reports.safe_write import overwrite_refusal, read_json, write_json
from autograder.frontends.students import cli
from autograder.sandbox.settings import Settings

ASSIGNMENT = DEFAULT  # the chapter the bundle grades
NOTEBOOK_NAME = f"{ASSIGNMENT}.ipynb"
DEFAULT_ZIP = Path("build") / "gradescope" / f"{ASSIGNMENT}_autograder.zip"
CPU_WHEELS = "https://download.pytorch.org/whl/cpu"
# {"seed": N}, only with build --hidden-examples: in /autograder/source, which the confined
# worker cannot read; never in the students' repository or this checkout.
HIDDEN_EXAMPLES_FILE = "hidden_examples.json"

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the image (Ubuntu 24.04: Python 3.12 has
# a torch {torch} wheel). The root is the folder above this script's, so the repository's tests
# build this very venv offline elsewhere (TORCH_INDEX_URL names their local wheels).
set -euxo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$root" = /autograder ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip
fi
python3 -m venv "$root/venv"
"$root/venv/bin/python" -m pip install --upgrade pip
# The CPU build: Gradescope has no GPU, and the default wheel pulls several GB of CUDA.
"$root/venv/bin/python" -m pip install "torch=={torch}" --index-url "${{TORCH_INDEX_URL:-{cpu_wheels}}}"
"$root/venv/bin/python" -m pip install "$root/source[notebook]"  # what the notebook imports (matplotlib)
"$root/venv/bin/python" -c "import autograder.frontends.students.cli"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission; the grader writes results/results.json.
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
# Refuse to grade (exit 2, a 0 with the reason) where the worker cannot be fenced in.
export AUTOGRADER_REQUIRE_CONFINEMENT="${AUTOGRADER_REQUIRE_CONFINEMENT:-1}"
exec "$root/venv/bin/python" -m autograder gradescope run --root "$root"
"""


def torch_pin(constraints: Path = CHECKOUT / "constraints.txt") -> str:
    """The torch version constraints.txt pins for every install."""
    match = re.search(r"^torch==(\S+)\s*$", constraints.read_text(encoding="utf-8"), re.M)
    if not match:
        raise SystemExit(f"{constraints}: no exact torch pin (torch==X)")
    return match.group(1)


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # fixed: the zip is reproducible
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    archive.writestr(info, data)


def build(out: Path = DEFAULT_ZIP, hidden_seed: int | None = None) -> Path:
    """The zip; with ``hidden_seed``, each submission is graded again on hidden examples too."""
    pyproject = CHECKOUT / "pyproject.toml"
    if not pyproject.is_file():
        raise SystemExit(f"no {pyproject}: build the zip from a checkout of the repository")
    setup = SETUP_SH.format(torch=torch_pin(), cpu_wheels=CPU_WHEELS)
    out = Path(out)
    if why := overwrite_refusal(out, "--out", lambda data: data.startswith(b"PK")):  # only an earlier zip is replaced
        raise SystemExit(f"error: {why}")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w") as archive:
        _add(archive, "setup.sh", setup.encode(), executable=True)
        _add(archive, "run_autograder", RUN_AUTOGRADER.encode(), executable=True)
        if hidden_seed is not None:
            _add(archive, HIDDEN_EXAMPLES_FILE, json.dumps({"seed": hidden_seed}).encode())
        for path, data in grader_bundle(CHECKOUT).items():
            _add(archive, path, data)
    partial.replace(out)
    return out


def hidden_examples_seed(source: Path) -> int | None:
    """The secret seed the bundle carries, or None."""
    path = source / HIDDEN_EXAMPLES_FILE
    if not path.is_file():
        return None
    data = read_json(path)
    if not isinstance(data, dict) or type(data.get("seed")) is not int:
        raise SystemExit(f"{path}: not a hidden-examples file with a whole number as its seed; "
                         "rebuild the zip with make gradescope")
    return data["seed"]


def run_inside(root: Path) -> int:
    cli.fork_workers_here("cpu", Settings.read())  # before the hidden seed is read
    from autograder.core.engine import not_graded_report  # these two import torch
    from autograder.frontends.reports.console import print_console

    results = root / "results" / "results.json"
    submission = root / "submission"
    # the assignment's notebook anywhere in the upload, else the shallowest one
    found = finder.find_notebook(submission, ASSIGNMENT, below=True, several="shallowest")
    notebook = found.notebook
    why = f"no notebook (.ipynb) in the submission; upload your {NOTEBOOK_NAME}" if notebook is None else ""
    try:
        seed = hidden_examples_seed(root / "source")
    except SystemExit as exc:  # the bundle is broken, not the submission: a 0 that says so
        why = why or f"the autograder is misconfigured ({exc}); please tell the course staff"
    if why:
        report = not_graded_report(load(ASSIGNMENT), str(notebook or submission), why)
        write_json(results, gradescope_json(report))
        print_console(report)
        return 0
    # the grade is results.json, whatever the exit status; --verbose: a student cannot pass flags
    cli.main([str(notebook), "--results", str(results), "--device", "cpu", "--verbose",
              *(["--hidden-examples-seed", str(seed)] if seed is not None else [])])
    if notebook.name != NOTEBOOK_NAME or len(found.candidates) > 1:
        data = json.loads(results.read_text(encoding="utf-8"))
        others = [str(p.relative_to(submission)) for p in found.candidates if p != notebook]
        note = f"Graded {notebook.relative_to(submission)}"
        if others:
            note += f" (also in the submission, not graded: {', '.join(others)})"
        data["output"] = f"{note}\n{data.get('output', '')}"
        write_json(results, data)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    build_cmd = commands.add_parser("build", help="build the Gradescope autograder zip")
    build_cmd.add_argument("--out", type=Path, default=DEFAULT_ZIP, help=f"where (default {DEFAULT_ZIP})")
    hidden = build_cmd.add_mutually_exclusive_group()
    hidden.add_argument("--hidden-examples", action="store_true",
                        help="grade each submission on hidden examples too, from a new secret seed "
                             "(their tests are shown after the due date)")
    hidden.add_argument("--hidden-seed", type=int, metavar="N", help="the same, with this seed (rebuild a bundle)")
    run_cmd = commands.add_parser("run", help="grade the submission inside Gradescope (run_autograder)")
    run_cmd.add_argument("--root", type=Path, default=Path("/autograder"), help="default /autograder")


def run(args: argparse.Namespace) -> int:
    if args.command == "build":
        seed = secrets.randbits(48) if args.hidden_examples else args.hidden_seed
        out = build(args.out, seed)
        print(f"wrote {out} ({out.stat().st_size // 1024} KiB): upload it as the assignment's "
              "autograder on Gradescope (base image Ubuntu 24.04)")
        if seed is not None:
            print(f"hidden examples on: seed {seed}, in the zip only (keep the zip private; "
                  f"--hidden-seed {seed} rebuilds it)")
        return 0
    return run_inside(args.root)
