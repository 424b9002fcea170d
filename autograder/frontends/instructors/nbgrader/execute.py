"""nbgrader's kernel replaced: one run in the confined worker gives every cell's outputs and each
stage's grade. It is a subprocess (``stage-grades``), which may end every process the submission left."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Unicode

from autograder.core.chapter import Chapter
from autograder.frontends.instructors.nbgrader.stages import cells_key, chapter_of, diagnosis_path, hidden_seeds, stage_cells
from autograder.frontends.reports.diagnoses import DIAGNOSES
from autograder.frontends.reports.safe_write import write_json
from autograder.sandbox.settings import Limits

# make autograde's workers' runs by student, (cells_key, result): held in this process's memory,
# never a file a submission could touch, until the serial pass takes each for the very same cells.
PRECOMPUTED: dict[str, tuple[str, dict]] = {}
REUSED: list[str] = []


def take_precomputed(student: str, key: str) -> dict | None:
    offered = PRECOMPUTED.pop(student, None)
    if offered is None or offered[0] != key:
        return None
    REUSED.append(student)
    return offered[1]


class SandboxExecute(NbGraderPreprocessor):
    """In place of nbgrader's ``Execute``: each test cell gets its stage's score (nbgrader's partial credit)."""

    device = Unicode("cpu", help="where the sandboxed worker runs the student's code (cpu, cuda)").tag(config=True)
    cell_timeout = Float(Limits().cell_seconds,
                         help="seconds for one notebook cell in the sandbox (the CLI's --cell-timeout)").tag(config=True)
    stage_timeout = Float(Limits().stage_seconds,
                          help="seconds for one stage's checks (the CLI's --stage-timeout)").tag(config=True)
    total_timeout = Float(Limits().total_seconds,
                          help="seconds for the whole grading of one notebook").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        student, assignment = str(info.get("student") or ""), str(info.get("assignment") or "")
        chapter = chapter_of(assignment)
        result = take_precomputed(student, cells_key(nb)) or self.run_in_sandbox(nb, chapter)
        apply_run(nb, chapter, result)
        # the record for the class report; not beside the autograded notebook, which goes into the feedback
        path = diagnosis_path(Path(DIAGNOSES), student, assignment)
        try:
            if path is not None:
                write_json(path, {**result["diagnosis"], "student": student, "assignment": assignment})
        except OSError as exc:
            self.log.warning("could not write the diagnosis record %s: %s", path, exc)
        bonus_stages = [s for s in (chapter.stages if chapter else ()) if s.bonus and str(s.number) in result.get("stages", {})]
        resources.setdefault("autograder", {})["bonus"] = sum(float(result["stages"][str(s.number)]["score"]) for s in bonus_stages)
        if result.get("error"):
            self.log.warning("the sandboxed grader could not grade this notebook: %s", result["error"])
        return nb, resources

    def run_in_sandbox(self, nb, chapter: Chapter | None) -> dict:
        cells = stage_cells(nb, chapter) if chapter else {}
        seeds = {stage.number: seed for index, stage in cells.items() for seed in hidden_seeds(nb.cells[index].source, stage)}
        numbers = sorted({s.number for s in cells.values()})
        with tempfile.TemporaryDirectory(prefix="sandbox-run-") as scratch:
            notebook = Path(scratch, "submission.ipynb")
            nbformat.write(nb, notebook)
            result = self.grade_file(notebook, chapter if numbers else None, numbers, seeds)
        if not (chapter and numbers):
            result["stages"] = {}
        return result

    def grade_file(self, notebook: Path, chapter: Chapter | None, numbers: list[int], seeds: dict[int, int]) -> dict:
        # -I: no PYTHON* variable and no current folder on the grader's path
        command = [sys.executable, "-I", "-m", "autograder", "stage-grades", str(notebook), "--device", self.device,
                   *(["--chapter", chapter.id, "--stage", *map(str, numbers)] if chapter else [])]
        # the seeds go on a pipe: any process can read another one's command line
        limits = {"cell_seconds": self.cell_timeout, "stage_seconds": self.stage_timeout, "total_seconds": self.total_timeout}
        proc = subprocess.run(command, capture_output=True, text=True, input=json.dumps(
            {"seeds": {str(n): s for n, s in sorted(seeds.items())}, "limits": limits}))
        try:
            result = json.loads(proc.stdout) if proc.returncode == 0 else None
        except ValueError:
            result = None
        if not isinstance(result, dict):
            tail = "\n".join((proc.stdout[-2000:] + proc.stderr).strip().splitlines()[-20:])
            raise RuntimeError(f"the sandboxed grader failed (exit status {proc.returncode}):\n{tail}")
        return result


def apply_run(nb, chapter: Chapter | None, result: dict) -> None:
    """Each code cell's outputs; a test cell its report and score (nothing on stderr: a failed test to nbgrader)."""
    by_index = {c.get("index"): c for c in result.get("cells", []) if isinstance(c, dict)}
    stages = stage_cells(nb, chapter) if chapter else {}
    count = 0
    for position, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        ran = by_index.get(position + 1, {})
        outputs = [nbformat.v4.new_output("stream", name=name, text=ran[name]) for name in ("stdout", "stderr") if ran.get(name)]
        if ran.get("status") == "error":
            error = ran.get("error") or {}
            ename = error.get("type") or ("CellTimeoutError" if error.get("kind") == "fatal" else "Error")
            where = f" ({error['where']})" if error.get("where") else ""
            outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=str(error.get("message", "")),
                                                  traceback=[f"{ename}: {error.get('message', '')}{where}"]))
        if position in stages:
            graded = result.get("stages", {}).get(str(stages[position].number))
            text, score = (graded["text"], f"{graded['score']:g}") if graded is not None else \
                ("not graded: " + (result.get("error") or "the sandboxed grader gave no grade"), "0")
            outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n"),
                       nbformat.v4.new_output("execute_result", data={"text/plain": score}, execution_count=count)]
        cell.outputs = outputs
