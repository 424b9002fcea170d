"""nbgrader, graded by the one engine: plugins that nbgrader_config.py switches on.

- :class:`SandboxExecute` (in place of nbgrader's ``Execute``, the kernel execution): runs
  the notebook once in the confined worker, the one ``make test`` and CI use, and fills every
  cell's outputs and each stage's test cell (its report and score) from that one run. No
  student code runs in a Jupyter kernel, in nbgrader's process or anywhere unconfined: it
  cannot reach the gradebook, the venv or the notebooks nbgrader writes.
- :class:`StageCsvExport` (``nbgrader export``): one row per student, a column per stage,
  the total.

The sandboxed run happens in a subprocess (:mod:`autograder.frontends.stagegrades`, started
with ``-I``): it becomes a subreaper and ends every process the submission left behind, which
must not happen inside nbgrader (or a Jupyter server running nbgrader), whose other children
are kernels. Its answer comes back on a pipe, never through a file.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.plugins import ExportPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Unicode

from autograder.chapters import load
from autograder.core.chapter import Chapter, Stage
from autograder.sandbox.client import Limits


def chapter_of(assignment: str | None) -> Chapter | None:
    """The chapter graded for an nbgrader assignment (the assignment id is the chapter id)."""
    try:
        return load(assignment) if assignment else None
    except KeyError:
        return None


def by_grade_id(chapter: Chapter | None) -> dict[str, Stage]:
    return {s.grade_id: s for s in chapter.stages} if chapter else {}


def csv_column(stage: Stage) -> str:
    return f"stage{stage.number}_{stage.id}"


def stage_cells(nb, chapter: Chapter) -> dict[int, Stage]:
    """Index of each stage's test cell (its nbgrader grade_id) -> the stage."""
    stages = by_grade_id(chapter)
    found = {}
    for index, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in stages:
            found[index] = stages[grade_id]
    return found


def hidden_seeds(source: str, stage: Stage) -> list[int]:
    """The seeds of the hidden calls ``grade_stage(CHAPTER, N, globals(), hidden_seed=S)`` in a test cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    seeds = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "grade_stage"):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        seed, number = keywords.get("hidden_seed"), node.args[1] if len(node.args) > 1 else None
        if isinstance(seed, ast.Constant) and isinstance(seed.value, int) and isinstance(number, ast.Constant) \
                and number.value in (stage.number, str(stage.number)):
            seeds.append(seed.value)
    return seeds


def cells_key(nb) -> str:
    """What a sandboxed run depends on: every cell's type, source and nbgrader metadata."""
    return json.dumps([(c.cell_type, c.source, c.get("metadata", {}).get("nbgrader")) for c in nb.cells],
                      sort_keys=True, default=str)


class SandboxExecute(NbGraderPreprocessor):
    """Stands in for nbgrader's ``Execute``: the notebook runs once, in the confined worker
    (never in a Jupyter kernel with the instructor's rights), and that one run gives every
    cell's outputs (what nbgrader stores in the autograded notebook and shows in the feedback)
    and each stage's grade, written into the stage's test cell as its report and score, which
    nbgrader reads as partial credit: nbgrader's per-cell scores are the engine's per-stage
    scores. Only nbgrader's own process touches the gradebook; the worker cannot even read it.

    ``make autograde`` (:mod:`autograder.frontends.classgrade`) runs these sandboxed runs for
    many students at once and hands their results to :attr:`precomputed` in its own memory;
    nbgrader's serial pass then uses a result only for the very cells it was computed from."""

    device = Unicode("cpu", help="where the sandboxed worker runs the student's code (cpu, cuda)").tag(config=True)
    cell_timeout = Float(Limits().cell_seconds,
                         help="seconds for one notebook cell in the sandbox (the CLI's --cell-timeout)").tag(config=True)
    stage_timeout = Float(Limits().stage_seconds,
                          help="seconds for one stage's checks (the CLI's --stage-timeout)").tag(config=True)
    total_timeout = Float(Limits().total_seconds,
                          help="seconds for the whole grading of one notebook").tag(config=True)
    # student id -> (cells_key, result): sandboxed runs done by make autograde's workers
    precomputed: dict[str, tuple[str, dict]] = {}
    reused = 0  # precomputed results used in this process, for make autograde's summary

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        chapter = chapter_of(info.get("assignment"))
        key = cells_key(nb)
        earlier = SandboxExecute.precomputed.pop(str(info.get("student")), None)
        if earlier is not None and earlier[0] == key:
            SandboxExecute.reused += 1
            result = earlier[1]
        else:
            result = self.run_in_sandbox(nb, chapter)
        apply_run(nb, chapter, result)
        if result.get("error"):
            self.log.warning("the sandboxed grader could not grade this notebook: %s", result["error"])
        return nb, resources

    def run_in_sandbox(self, nb, chapter: Chapter | None) -> dict:
        cells = stage_cells(nb, chapter) if chapter else {}
        seeds = {}
        for index, stage in cells.items():
            for seed in hidden_seeds(nb.cells[index].source, stage):
                seeds[stage.number] = seed
        numbers = sorted({s.number for s in cells.values()})
        with tempfile.TemporaryDirectory(prefix="sandbox-run-") as scratch:
            notebook = Path(scratch, "submission.ipynb")
            nbformat.write(nb, notebook)
            # -I: the grader's own subprocess reads no PYTHON* variable and no current folder.
            command = [sys.executable, "-I", "-m", "autograder.frontends.stagegrades", str(notebook),
                       "--device", self.device, "--cell-timeout", str(self.cell_timeout),
                       "--stage-timeout", str(self.stage_timeout), "--total-timeout", str(self.total_timeout),
                       *(["--chapter", chapter.id, "--stage", *map(str, numbers)] if chapter and numbers else []),
                       *[f"--hidden-seed={n}={s}" for n, s in sorted(seeds.items())]]
            proc = subprocess.run(command, capture_output=True, text=True)
        try:
            result = json.loads(proc.stdout) if proc.returncode == 0 else None
        except ValueError:
            result = None
        if not isinstance(result, dict):
            tail = "\n".join((proc.stdout[-2000:] + proc.stderr).strip().splitlines()[-20:])
            raise RuntimeError(f"the sandboxed grader failed (exit status {proc.returncode}):\n{tail}")
        if not (chapter and numbers):
            result["stages"] = {}
        return result


def apply_run(nb, chapter: Chapter | None, result: dict) -> None:
    """Cell outputs and stage grades from one sandboxed run, in place: each code cell gets what
    it printed (stdout, stderr) or the error it raised; each stage's test cell its report and
    score instead (nothing on stderr, which nbgrader would read as a failed test)."""
    by_index = {c.get("index"): c for c in result.get("cells", []) if isinstance(c, dict)}
    stages = stage_cells(nb, chapter) if chapter else {}
    count = 0
    for position, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        ran = by_index.get(position + 1, {})
        outputs = []
        for name in ("stdout", "stderr"):
            if ran.get(name):
                outputs.append(nbformat.v4.new_output("stream", name=name, text=ran[name]))
        if ran.get("status") == "error":
            error = ran.get("error") or {}
            ename = error.get("type") or ("CellTimeoutError" if error.get("kind") == "fatal" else "Error")
            where = f" ({error['where']})" if error.get("where") else ""
            outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=str(error.get("message", "")),
                                                  traceback=[f"{ename}: {error.get('message', '')}{where}"]))
        graded = result.get("stages", {}).get(str(stages[position].number)) if position in stages else None
        if graded is not None:
            outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=graded["text"] + "\n"),
                nbformat.v4.new_output("execute_result", data={"text/plain": f"{graded['score']:g}"},
                                       execution_count=count),
            ]
        elif position in stages:
            outputs = [nbformat.v4.new_output("stream", name="stdout", text="not graded: "
                                              + (result.get("error") or "the sandboxed grader gave no grade") + "\n"),
                       nbformat.v4.new_output("execute_result", data={"text/plain": "0"}, execution_count=count)]
        cell.outputs = outputs


class StageCsvExport(ExportPlugin):
    """``nbgrader export``: a row per student and assignment, a column per graded stage (the
    score of its test cell, a grader's manual score where one was given), then nbgrader's
    totals. A stage whose test cell nbgrader does not grade (the bonus) has no column."""

    def export(self, gradebook) -> None:
        dest = Path(self.to or "grading/grades.csv")
        dest.parent.mkdir(parents=True, exist_ok=True)
        wanted_students = {str(s) for s in self.student}
        wanted_assignments = {str(a) for a in self.assignment}
        assignments = [a for a in gradebook.assignments if not wanted_assignments or a.name in wanted_assignments]
        graded = {cell.name for a in assignments for nb in a.notebooks for cell in nb.grade_cells}
        stages = {grade_id: stage for a in assignments for grade_id, stage in by_grade_id(chapter_of(a.name)).items()}
        stage_columns = list(dict.fromkeys(csv_column(s) for s in stages.values() if s.grade_id in graded))
        columns = ["assignment", "student_id", "last_name", "first_name", "email", "timestamp",
                   *stage_columns, "raw_score", "late_submission_penalty", "score", "max_score"]
        rows = []
        for assignment in assignments:
            for student in gradebook.students:
                if wanted_students and student.id not in wanted_students:
                    continue
                row = {"assignment": assignment.name, "student_id": student.id, "last_name": student.last_name or "",
                       "first_name": student.first_name or "", "email": student.email or "",
                       "max_score": f"{assignment.max_score:g}", **{c: "0" for c in stage_columns}}
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:  # nothing submitted: zero everywhere
                    row.update(timestamp="", raw_score="0", late_submission_penalty="0", score="0")
                else:
                    for notebook in submission.notebooks:
                        for grade in notebook.grades:
                            stage = stages.get(grade.name)
                            if stage is not None and csv_column(stage) in row:  # no score yet (a manual grade pending): left empty
                                row[csv_column(stage)] = "" if grade.score is None else f"{grade.score:g}"
                    penalty = submission.late_submission_penalty or 0.0
                    row.update(timestamp=str(submission.timestamp or ""), raw_score=f"{submission.score:g}",
                               late_submission_penalty=f"{penalty:g}",
                               score=f"{max(0.0, submission.score - penalty):g}")
                rows.append(row)
        with open(dest, "w", newline="") as handle:
            writer = csv.DictWriter(handle, columns)
            writer.writeheader()
            writer.writerows(rows)
        self.log.info("Exported %d rows to %s", len(rows), dest)
