"""nbgrader, graded by the one engine: plugins that nbgrader_config.py switches on.

- :class:`SandboxGrades` (an autograde preprocessor, right after nbgrader's ``Execute``):
  grades the notebook again in the sandboxed engine, the one ``make test`` and CI use, and
  writes that grade into each stage's test cell. The kernel nbgrader runs is the student's
  own, so whatever its test cells printed could have been forged; the sandbox's grade cannot.
  The cell's new output is the stage's report and its score, which nbgrader reads as partial
  credit: nbgrader's per-cell scores are the engine's per-stage scores. It also means a
  warning on stderr, or a test cell the student edited, cannot change a score.
- :class:`ReplayExecution`: used by ``make autograde`` (:mod:`autograder.frontends.classgrade`), which
  runs the slow part (kernel and sandbox) for many students at once, then lets nbgrader
  record the results serially; this replays the notebook executed in parallel.
- :class:`StageCsvExport` (``nbgrader export``): one row per student, a column per stage,
  the total.

The sandboxed grade comes from a subprocess (:mod:`autograder.frontends.stagegrades`): the engine
becomes a subreaper there and ends every process the submission left behind, which must not
happen inside nbgrader (or a Jupyter server running nbgrader), whose other children are kernels.
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
from traitlets import Float, List, Unicode

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


class SandboxGrades(NbGraderPreprocessor):
    """Replace the output of each stage's test cell with the sandboxed engine's grade."""

    device = Unicode("cpu", help="where the sandboxed worker runs the student's code (cpu, cuda)").tag(config=True)
    cell_timeout = Float(Limits().cell_seconds,
                         help="seconds for one notebook cell in the sandbox (the CLI's --cell-timeout)").tag(config=True)
    stage_timeout = Float(Limits().stage_seconds,
                          help="seconds for one stage's checks (the CLI's --stage-timeout)").tag(config=True)

    def preprocess(self, nb, resources):
        chapter = chapter_of(resources.get("nbgrader", {}).get("assignment"))
        if chapter is None:
            return nb, resources
        cells = stage_cells(nb, chapter)
        if not cells:
            return nb, resources
        seeds = {}
        for index, stage in cells.items():
            for seed in hidden_seeds(nb.cells[index].source, stage):
                seeds[stage.number] = seed
        results = self.grade(nb, chapter, sorted({s.number for s in cells.values()}), seeds)
        for index, stage in cells.items():
            graded = results[str(stage.number)]
            cell = nb.cells[index]
            cell.outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=graded["text"] + "\n"),
                nbformat.v4.new_output("execute_result", data={"text/plain": f"{graded['score']:g}"},
                                       execution_count=cell.get("execution_count")),
            ]
        return nb, resources

    def grade(self, nb, chapter: Chapter, numbers: list[int], seeds: dict[int, int]) -> dict:
        with tempfile.TemporaryDirectory(prefix="sandbox-grades-") as scratch:
            notebook, out = Path(scratch, "submission.ipynb"), Path(scratch, "grades.json")
            nbformat.write(nb, notebook)
            command = [sys.executable, "-m", "autograder.frontends.stagegrades", str(notebook), "--out", str(out),
                       "--chapter", chapter.id, "--device", self.device, "--cell-timeout", str(self.cell_timeout),
                       "--stage-timeout", str(self.stage_timeout), "--stage", *map(str, numbers),
                       *[f"--hidden-seed={n}={s}" for n, s in sorted(seeds.items())]]
            proc = subprocess.run(command, capture_output=True, text=True)
            if proc.returncode != 0 or not out.is_file():
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
                raise RuntimeError(f"the sandboxed grader failed (exit status {proc.returncode}):\n{tail}")
            graded = json.loads(out.read_text())
        if graded.get("error"):
            self.log.warning("the sandboxed grader could not grade this notebook: %s", graded["error"])
        return graded["stages"]


def same_cells(a, b) -> bool:
    def key(nb):
        return [(c.cell_type, c.source, c.get("metadata", {}).get("nbgrader")) for c in nb.cells]
    return key(a) == key(b)


class ReplayExecution(NbGraderPreprocessor):
    """Stands in for ``Execute`` + ``SandboxGrades``: takes the notebook that a parallel
    worker executed and graded for this student (same cells, checked), so that nbgrader's own
    preprocessors record it exactly as a serial run would. Without one, it executes and
    grades here, as the serial pipeline does."""

    executed_directory = Unicode("", help="where the parallel workers wrote executed notebooks: "
                                 "<dir>/<student>/<assignment>/<notebook>.ipynb").tag(config=True)
    stands_in_for = List(help="the autograde preprocessors replayed (default: Execute, SandboxGrades)").tag(config=True)
    replayed = 0  # notebooks replayed in this process, for make autograde's summary

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        path = Path(self.executed_directory, info["student"], info["assignment"], f"{info['notebook']}.ipynb")
        if self.executed_directory and path.is_file():
            executed = nbformat.read(path, as_version=4)
            if same_cells(nb, executed):
                ReplayExecution.replayed += 1
                return executed, resources
            self.log.warning("%s differs from the notebook being autograded; executing it again", path)
        from nbgrader.preprocessors import Execute

        for step in self.stands_in_for or [Execute, SandboxGrades]:
            nb, resources = step(parent=self).preprocess(nb, resources)
        return nb, resources


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
