"""Classroom 50: the per-assignment autograder folder (``build``), and the grading it runs (``grade``),
whose result files are written last, from the grading process, never from the checkout."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from autograder import CHECKOUT
from autograder.chapters import DEFAULT, load
from autograder.core.checks import CheckStatus
from autograder.core.results import GradeReport
from autograder.frontends import finder, fingerprint
from autograder.frontends.commands import Refused
from autograder.frontends.hosted import ci
from autograder.frontends.hosted.gradescope import CPU_WHEELS, torch_pin
from autograder.frontends.reports.safe_write import read_json, write_atomic, write_files, write_json
from autograder.frontends.reports.text import bonus_total
from autograder.frontends.students import cli
from autograder.sandbox.confinement import is_confined
from autograder.sandbox.settings import Settings

SCHEMA = "classroom50/result/v1"
RESULT_FILE = "result.json"
RELEASE_BODY_FILE = "release-body.md"
BUNDLE_LIMIT = 10 * 1024 * 1024  # Classroom 50's cap on a published bundle
GRADER_FOLDER = "grader"
ENTRY_FILE = "autograder.py"
# Written into DEST by build; a folder holding it (and only what build wrote) may be rebuilt.
MANIFEST_FILE = "classroom50-bundle.json"

# autograder.py: standard library only (the runner's Python); build fills in the fields.
ENTRY = '''\
"""Classroom 50 autograder for {chapter}: made by `make classroom50`; do not edit, rebuild.

Installs the pinned torch (TORCH_INDEX_URL, else PyTorch's CPU index on Linux) and the grader
into a venv under $RUNNER_TEMP, then grades the student's checkout (the working directory).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

TORCH = "torch=={pin}"
CPU_WHEELS = "{cpu_wheels}"


def say(text):
    print("classroom50 autograder: " + text, flush=True)


def install(grader):
    """A venv with torch and the grader, reused for this very bundle."""
    digest = hashlib.sha256((grader / "{manifest}").read_bytes()).hexdigest()[:16]
    home = Path(os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()) / ("{chapter}-grader-" + digest)
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if (home / ".ready").is_file():
        return python
    say("installing " + TORCH + " and the grader into " + str(home))
    venv.create(home, with_pip=True, clear=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"]
    index = os.environ.get("TORCH_INDEX_URL", CPU_WHEELS if sys.platform.startswith("linux") else "")
    subprocess.run(pip + [TORCH] + (["--index-url", index] if index else []), check=True)
    source = Path(tempfile.mkdtemp(prefix="grader-source-")) / "grader"
    shutil.copytree(grader, source)  # pip builds in the source folder; the bundle stays as published
    subprocess.run(pip + ["-c", str(source / "constraints.txt"), str(source) + "[notebook]"], check=True)
    (home / ".ready").write_text("ok\\n")
    return python


def main():
    here = Path(__file__).resolve().parent
    bundle = Path(os.environ.get("CLASSROOM50_BUNDLE_DIR") or here)
    grader = bundle / "{grader}" if (bundle / "{grader}").is_dir() else here / "{grader}"
    workspace = Path.cwd()
    for name in ("{result}", "{body}"):  # nothing the checkout holds may stand as the result
        (workspace / name).unlink(missing_ok=True)
    try:
        python = install(grader)
    except (OSError, subprocess.CalledProcessError) as exc:
        say("could not install the grader (" + str(exc) + "); nothing was graded")
        return 1
    env = dict(os.environ, AUTOGRADER_REQUIRE_CONFINEMENT="1", COLUMNS="140")
    # -I and a working directory of its own: the student's checkout (which holds a copy of the
    # grader the student can edit) is never on the grader's import path.
    scratch = tempfile.mkdtemp(prefix="classroom50-grade-")
    return subprocess.run([str(python), "-I", "-m", "autograder", "classroom50", "grade", str(workspace)],
                          cwd=scratch, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
'''


def identity(chapter_id: str, env) -> dict:
    """The submission's identity from the runner's environment (stand-ins for a local trial run)."""
    local = "local (not run by Classroom 50)"
    owner = env.get("OWNER") or env.get("USERNAME") or "local"
    commit = env.get("COMMIT_URL") or local
    return {"classroom": env.get("CLASSROOM") or "local", "assignment": env.get("ASSIGNMENT") or chapter_id,
            "assignment_type": env.get("ASSIGNMENT_TYPE") or "individual", "owner": owner,
            "submission": env.get("SUBMISSION_TAG") or "submit/local", "commit": commit,
            "release": env.get("RELEASE_URL") or local, "review": env.get("REVIEW_URL") or commit,
            "datetime": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def classroom_result(report: GradeReport, who: dict) -> dict:
    """result.json: a test per stage; the bonus is a test, never in ``score`` or ``max-score``."""
    tests, score, maximum = [], 0, 0
    for result in report.stages:
        points, most = int(round(result.score)), int(round(result.max_score))  # Classroom 50 takes integers
        name = f"Stage {result.stage.number} {result.stage.id}: {result.stage.title}"
        tests.append({"test-name": name + (" (bonus, not in the score)" if result.stage.bonus else ""),
                      "passed": result.status is CheckStatus.PASSED, "score": points, "max-score": most})
        if not result.stage.bonus:
            score, maximum = score + points, maximum + most
    return {"schema": SCHEMA, **who, "score": score, "max-score": maximum, "tests": tests}


def status_and_summary(report: GradeReport, result: dict) -> tuple[str, str]:
    """``status=`` (success: every graded stage passed) and one summary line."""
    graded = [r for r in report.stages if not r.stage.bonus]
    passed = sum(r.status is CheckStatus.PASSED for r in graded)
    summary = (f"{report.chapter.id}: {result['score']}/{result['max-score']} points{bonus_total(report)}, "
               f"{passed}/{len(graded)} stages passed")
    if report.error:
        summary += " (could not grade the notebook)"
    return ("success" if graded and passed == len(graded) else "failure"), summary


def release_body(report: GradeReport, result: dict, note: str = "") -> str:
    """The GitHub Release the student sees: CI's step summary, then what Classroom 50 records."""
    lines = [ci.summary_markdown(report).rstrip("\n"), ""]
    if note:
        lines += [f"Note: {ci._cell(note)}", ""]
    recorded = f"Classroom 50 records {result['score']}/{result['max-score']} points"
    if any(r.stage.bonus for r in report.stages):
        recorded += "; the bonus stage is listed as a test, outside the score"
    return "\n".join(lines + [recorded + "."]) + "\n"


def grading_broke(report: GradeReport) -> bool:
    """The worker was not fenced in or the grader failed: an error, not a 0 (a missing or
    damaged notebook is a grade)."""
    return bool(report.error) and (report.error.startswith(cli.GRADER_FAILED) or "AUTOGRADER_REQUIRE_CONFINEMENT" in report.error
                                   or (bool(report.confinement) and not is_confined(report.confinement)))


def grade(workspace: Path, environ=os.environ) -> int:
    from autograder.core.engine import not_graded_report  # these two import torch
    from autograder.frontends.reports.console import print_console

    chapter = load(DEFAULT)
    workspace = Path(workspace).resolve()
    notebook, note = finder.find_in_repository(workspace, chapter)
    with tempfile.TemporaryDirectory(prefix="classroom50-") as scratch, ci.workflow_commands_stopped():
        if notebook is None:
            report = not_graded_report(chapter, str(workspace), note)
            note = ""
        else:
            copy = Path(scratch) / notebook.name  # a private copy: the checkout is only read
            shutil.copyfile(notebook, copy, follow_symlinks=False)
            report, _ = cli.grade_report(argparse.Namespace(submission=str(copy), device="cpu"), chapter,
                                         Settings.read(), None, show_traceback=True)
            report.submission = str(notebook.relative_to(workspace))
            stale = cli.stale_points_note(str(copy), chapter)  # a stale copy: the instructor's points grade it
            note = "; ".join(n for n in (note, stale) if n)
        print_console(report, verbose=True)
    if grading_broke(report):
        for name in (RESULT_FILE, RELEASE_BODY_FILE):  # no result file may stand as this run's
            (workspace / name).unlink(missing_ok=True)
        print(f"classroom50 autograder: the grading broke, nothing recorded as a grade: {report.error}")
        return 1
    result = classroom_result(report, identity(chapter.id, environ))
    status, summary = status_and_summary(report, result)
    write_json(workspace / RESULT_FILE, result)
    write_atomic(workspace / RELEASE_BODY_FILE, release_body(report, result, note))
    if environ.get("GITHUB_OUTPUT"):
        with open(environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as handle:
            handle.write(f"status={status}\nsummary={summary.replace(chr(10), ' ').replace(chr(13), ' ')}\n")
    print(f"classroom50 autograder: {summary}")
    return 0


def bundle_files() -> dict[str, bytes]:
    """Every file of the autograder folder: the grader as the students' repository ships it, and autograder.py."""
    files = {f"{GRADER_FOLDER}/{path}": data for path, data in fingerprint.grader_bundle(CHECKOUT).items()}
    manifest = {"made_by": "make classroom50", "torch": torch_pin(),
                "files": {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}}
    files[f"{GRADER_FOLDER}/{MANIFEST_FILE}"] = (json.dumps(manifest, indent=1) + "\n").encode()
    files[ENTRY_FILE] = ENTRY.format(chapter=DEFAULT, pin=manifest["torch"], cpu_wheels=CPU_WHEELS,
                                     manifest=MANIFEST_FILE, grader=GRADER_FOLDER, result=RESULT_FILE,
                                     body=RELEASE_BODY_FILE).encode()
    return files


def packed_size(files: dict[str, bytes]) -> int:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size, info.mtime = len(data), 0
            archive.addfile(info, io.BytesIO(data))
    return len(buffer.getvalue())


def build(dest: Path) -> tuple[list[str], int]:
    """Write the folder to ``dest`` (new, empty, or an earlier build and nothing else); its files and packed size."""
    dest = Path(dest)
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise Refused(f"{dest} exists and is not a folder; give the assignment's autograder folder")
    files = bundle_files()
    size = packed_size(files)
    if size > BUNDLE_LIMIT:
        raise Refused(f"the folder packs to {size / 1e6:.1f} MB, over Classroom 50's 10 MB")
    present = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() or p.is_symlink()}
    manifest = read_json(dest / GRADER_FOLDER / MANIFEST_FILE)  # the files an earlier build wrote here
    written = manifest.get("files") if isinstance(manifest, dict) else None
    earlier = {*written, f"{GRADER_FOLDER}/{MANIFEST_FILE}", ENTRY_FILE} if isinstance(written, dict) else set()
    if not present <= earlier:
        raise Refused(f"{dest} holds files make classroom50 did not write ({', '.join(sorted(present - earlier)[:5])}); "
                      "give the assignment's own folder, new or made by make classroom50 (nothing was changed)")
    if present:
        shutil.rmtree(dest)  # an earlier build and nothing else
    write_files(dest, files)
    (dest / ENTRY_FILE).chmod(0o755)
    return sorted(files), size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    build_cmd = commands.add_parser("build", help="write the per-assignment autograder folder")
    build_cmd.add_argument("dest", type=Path, help="CLASSROOM/autograders/ASSIGNMENT in the classroom50 repository")
    grade_cmd = commands.add_parser("grade", help="grade a student's checkout as Classroom 50's runner asks")
    grade_cmd.add_argument("workspace", type=Path)


def run(args: argparse.Namespace) -> int:
    if args.command == "grade":
        return grade(args.workspace)
    files, size = build(args.dest)
    print(f"wrote {args.dest}: {len(files)} files, {size / 1024:.0f} KiB packed (Classroom 50 takes up to 10 MB); "
          "commit it to your classroom50 repository: docs/instructors/classroom50.md")
    return 0
