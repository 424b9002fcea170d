"""nbgrader, graded by the one engine: plugins that nbgrader_config.py switches on.

- :class:`SandboxExecute` (in place of nbgrader's ``Execute``, the kernel execution): runs
  the notebook once in the confined worker, the one ``make test`` and CI use, and fills every
  cell's outputs and each stage's test cell (its report and score) from that one run. No
  student code runs in a Jupyter kernel, in nbgrader's process or anywhere unconfined: it
  cannot reach the gradebook, the venv or the notebooks nbgrader writes.
- :class:`SaveExtraCredit`: the bonus stages' score as nbgrader extra credit.
- :class:`QuietOverwriteCells`: nbgrader's ``OverwriteCells`` without its false alarm on
  untouched test cells (their released text lacks the hidden tests the gradebook holds).
- :class:`LatePenalty`: a share of the score per day late, capped.
- :class:`StageCsvExport` (``nbgrader export``): one row per student, a column per stage,
  the total, the late penalty, the extra credit and what went wrong.
- :func:`submitted_notebook`: which notebook of a student's folder is the submission (a
  renamed copy is graded as the assignment's notebook; two candidates are an error).

The sandboxed run happens in a subprocess (:mod:`autograder.frontends.stagegrades`, started
with ``-I``): it becomes a subreaper and ends every process the submission left behind, which
must not happen inside nbgrader (or a Jupyter server running nbgrader), whose other children
are kernels. Its answer comes back on a pipe, never through a file.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.plugins import ExportPlugin, LateSubmissionPlugin
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells
from traitlets import Float, Unicode

from autograder.chapters import load
from autograder.core.chapter import Chapter, Stage
from autograder.sandbox.limits import Limits


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
        resources.setdefault("autograder", {})["bonus"] = bonus_score(chapter, result)
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
            result = self.grade_file(notebook, chapter if numbers else None, numbers, seeds)
        if not (chapter and numbers):
            result["stages"] = {}
        return result

    def grade_file(self, notebook: Path, chapter: Chapter | None, numbers: list[int], seeds: dict[int, int]) -> dict:
        """The sandboxed run of ``notebook``, by a grading process of its own (stagegrades):
        this process may be nbgrader's, with the gradebook open."""
        # -I: the grader's own subprocess reads no PYTHON* variable and no current folder.
        command = [sys.executable, "-I", "-m", "autograder.frontends.stagegrades", str(notebook),
                   "--device", self.device, *self.limit_arguments(),
                   *(["--chapter", chapter.id, "--stage", *map(str, numbers)] if chapter else []),
                   *[f"--hidden-seed={n}={s}" for n, s in sorted(seeds.items())]]
        proc = subprocess.run(command, capture_output=True, text=True)
        try:
            result = json.loads(proc.stdout) if proc.returncode == 0 else None
        except ValueError:
            result = None
        if not isinstance(result, dict):
            tail = "\n".join((proc.stdout[-2000:] + proc.stderr).strip().splitlines()[-20:])
            raise RuntimeError(f"the sandboxed grader failed (exit status {proc.returncode}):\n{tail}")
        return result

    def limits(self) -> Limits:
        return Limits(cell_seconds=self.cell_timeout, stage_seconds=self.stage_timeout, total_seconds=self.total_timeout)

    def limit_arguments(self) -> list[str]:
        limits = self.limits()
        return ["--cell-timeout", str(limits.cell_seconds), "--stage-timeout", str(limits.stage_seconds),
                "--total-timeout", str(limits.total_seconds)]


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


def bonus_score(chapter: Chapter | None, result: dict) -> float | None:
    """Points earned in the bonus stages of one sandboxed run (None: no bonus stage graded)."""
    bonus = [s for s in chapter.stages if s.bonus] if chapter else []
    scores = [result.get("stages", {}).get(str(s.number)) for s in bonus]
    scores = [float(g["score"]) for g in scores if isinstance(g, dict) and isinstance(g.get("score"), (int, float))]
    return sum(scores) if scores else None


def extra_credit_cell(chapter: Chapter | None) -> str | None:
    """The grade cell that carries the bonus as extra credit: the last graded stage's test
    cell (the bonus stage's own cell is not graded: it would raise the maximum)."""
    graded = [s for s in chapter.stages if not s.bonus] if chapter else []
    return graded[-1].grade_id if graded else None


class SaveExtraCredit(NbGraderPreprocessor):
    """After nbgrader's ``SaveAutoGrades``: the bonus stages' score (from the sandboxed run)
    becomes nbgrader's ``extra_credit`` on the last graded stage's test cell, so the
    gradebook, formgrader and the CSV count it on top of the score while the maximum stays
    the assignment's (100)."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources.get("nbgrader", {})
        chapter = chapter_of(info.get("assignment"))
        holder = extra_credit_cell(chapter)
        if holder is None or "db_url" not in info:
            return nb, resources
        bonus = resources.get("autograder", {}).get("bonus")
        with Gradebook(info["db_url"]) as gb:
            try:
                grade = gb.find_grade(holder, info["notebook"], info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            grade.extra_credit = bonus or None
            gb.db.commit()
        if bonus:
            self.log.info("extra credit %g (bonus stages) on %s", bonus, holder)
        return nb, resources


def released_source(source: str) -> str:
    """A source cell's text as the release has it: nbgrader's ClearHiddenTests applied."""
    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class QuietOverwriteCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` (a changed locked cell is put back from the gradebook),
    without its "Attribute 'checksum' ... has changed!" warning for a test cell the student
    never touched: the gradebook's checksum covers the hidden tests, which the release (and so
    every untouched submission) lacks. An edited locked cell is still reported."""

    def preprocess_cell(self, cell, resources, cell_index):
        self._submitted_source = cell.source
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name, attr, old, new):
        if attr == "checksum":
            try:
                source = self.gradebook.find_source_cell(name, self.notebook_id, self.assignment_id).source
            except MissingEntry:
                source = None
            if source is not None and released_source(source).strip() == self._submitted_source.strip():
                return
        super().report_change(name, attr, old, new)


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with a rule: ``per_day`` of the score for each day
    late or part of one, at most ``cap`` of it (0.1 and 0.5: 36 hours late costs 20%).
    The due date is the assignment's in the gradebook (``make duedate``); the submission time
    is ``timestamp.txt`` in the student's folder."""

    per_day = Float(0.1, help="share of the score taken per day (or part of a day) late").tag(config=True)
    cap = Float(0.5, help="the largest share of the score taken, however late").tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        if not total_seconds_late or total_seconds_late <= 0:
            return None
        days = math.ceil(total_seconds_late / 86400)
        share = min(self.cap, self.per_day * days)
        penalty = round(score * share, 2)
        self.log.warning("%s: %.1f hours late, %d day(s): penalty %g%% of %g = %g", student_id,
                         total_seconds_late / 3600, days, round(share * 100, 2), score, penalty)
        return penalty


IGNORED_NOTEBOOK_PARTS = {".ipynb_checkpoints", "__MACOSX"}


def submitted_notebook(folder: Path, assignment: str) -> tuple[Path | None, str]:
    """The notebook in a student's submission folder that is the submission, and a note.

    ``<assignment>.ipynb`` when it is there (other notebooks beside it are named in the note);
    else the one notebook under another name (``ch03_attention (1).ipynb``,
    ``Copy_of_ch03_attention.ipynb``), graded as the assignment's with a note; two or more
    candidates are an error naming them (None). Checkpoints and macOS debris never count."""
    expected = f"{assignment}.ipynb"
    found = sorted(p for p in Path(folder).glob("*.ipynb")
                   if p.is_file() and not p.name.startswith("._") and not IGNORED_NOTEBOOK_PARTS & set(p.parts))
    names = [p.name for p in found]
    if expected in names:
        others = [n for n in names if n != expected]
        return Path(folder) / expected, (f"graded {expected}; not graded: {', '.join(others)}" if others else "")
    if len(found) == 1:
        return found[0], f"renamed notebook: graded {found[0].name} as {expected}"
    if not found:
        return None, f"no notebook in the submission folder (expected {expected})"
    return None, (f"{len(found)} notebooks and none named {expected} ({', '.join(names)}): "
                  f"keep one, or rename the one to grade to {expected}")


class StageCsvExport(ExportPlugin):
    """``nbgrader export``: a row per student and assignment, a column per graded stage (the
    score of its test cell, a grader's manual score where one was given), then nbgrader's
    totals: ``raw_score`` (extra credit included), ``extra_credit`` (the bonus), the late
    penalty, ``score`` and ``max_score``; ``warnings`` says what a grader should know (a
    renamed or ambiguous notebook, lateness). A stage whose test cell nbgrader does not grade
    (the bonus) has no column. Students with a submission folder but no gradebook entry (two
    notebooks, nothing gradable) get a row of zeros with the reason."""

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
                   *stage_columns, "raw_score", "extra_credit", "late_submission_penalty", "score", "max_score",
                   "warnings"]
        rows = []
        coursedir = getattr(self.parent, "coursedir", None)
        for assignment in assignments:
            folders = submission_folders(coursedir, assignment.name)
            known = {student.id: student for student in gradebook.students}
            for student_id in sorted(set(known) | set(folders)):
                if wanted_students and student_id not in wanted_students:
                    continue
                student = known.get(student_id)
                row = {"assignment": assignment.name, "student_id": student_id,
                       "last_name": getattr(student, "last_name", None) or "",
                       "first_name": getattr(student, "first_name", None) or "", "email": getattr(student, "email", None) or "",
                       "max_score": f"{assignment.max_score:g}", **{c: "0" for c in stage_columns}}
                notes = []
                if student_id in folders:
                    chosen, note = submitted_notebook(folders[student_id], assignment.name)
                    notes.append(note if chosen else f"not graded: {note}")
                try:
                    submission = gradebook.find_submission(assignment.name, student_id)
                except MissingEntry:  # nothing submitted (or nothing gradable): zero everywhere
                    row.update(timestamp="", raw_score="0", extra_credit="0", late_submission_penalty="0", score="0")
                    if student_id in folders and not notes[0]:
                        notes.append("not autograded yet")
                else:
                    for notebook in submission.notebooks:
                        for grade in notebook.grades:
                            stage = stages.get(grade.name)
                            if stage is not None and csv_column(stage) in row:  # no score yet (a manual grade pending): left empty
                                # the stage's own score: extra credit (the bonus) has its own column
                                row[csv_column(stage)] = "" if grade.score is None else f"{grade.score - (grade.extra_credit or 0):g}"
                    penalty = submission.late_submission_penalty or 0.0
                    extra = sum(g.extra_credit or 0.0 for nb in submission.notebooks for g in nb.grades)
                    row.update(timestamp=str(submission.timestamp or ""), raw_score=f"{submission.score:g}",
                               extra_credit=f"{extra:g}", late_submission_penalty=f"{penalty:g}",
                               score=f"{max(0.0, submission.score - penalty):g}")
                    if submission.total_seconds_late:
                        notes.append(f"late by {submission.total_seconds_late / 3600:.1f} h")
                row["warnings"] = "; ".join(n for n in notes if n)
                rows.append(row)
        with open(dest, "w", newline="") as handle:
            writer = csv.DictWriter(handle, columns)
            writer.writeheader()
            writer.writerows(rows)
        self.log.info("Exported %d rows to %s", len(rows), dest)


def submission_folders(coursedir, assignment: str) -> dict[str, Path]:
    """Student id -> the student's submission folder for an assignment (submitted/<id>/<assignment>)."""
    if coursedir is None:
        return {}
    pattern = Path(coursedir.format_path(coursedir.submitted_directory, "*", assignment))
    return {folder.parent.name: folder for folder in sorted(pattern.parent.parent.glob(f"*/{assignment}")) if folder.is_dir()}


# -- make feedback ---------------------------------------------------------------------------

FEEDBACK_CSS = """
/* make feedback: long report lines and hints wrap instead of running off the page */
pre, .output_text pre, .jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.stage-heading { margin-top: 1.5em; border-bottom: 1px solid #ccc; }
math { font-size: 1.1em; }
"""

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$\w])\$([^$\n]+?)\$(?![\w$])", re.DOTALL)
CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)


def math_as_mathml(markdown: str) -> str:
    """``$...$`` and ``$$...$$`` in a markdown cell as MathML, which browsers draw without
    MathJax (the feedback is read offline); code spans and fenced blocks stay as they are. A
    formula latex2mathml cannot read stays as it was written."""
    try:
        from latex2mathml.converter import convert
    except ImportError:  # the instructor's install has it; without it the LaTeX stays readable text
        return markdown

    def one(match: re.Match) -> str:
        display = match.group(1) is not None
        try:
            return convert((match.group(1) if display else match.group(2)).strip(),
                           display="block" if display else "inline")
        except Exception:
            return match.group(0)

    return "".join(part if CODE.fullmatch(part) else MATH.sub(one, part) for part in CODE.split(markdown))


def once(text: str) -> str:
    """A test cell's report with every repeated line after its first appearance dropped (the
    same hint under several checks)."""
    seen, kept = set(), []
    for line in text.splitlines(keepends=True):
        key = line.strip()
        if key and key in seen and not key[:1].isdigit() and "✗" not in key and "✓" not in key:
            continue
        seen.add(key)
        kept.append(line)
    return "".join(kept)


class ReadableFeedback(NbGraderPreprocessor):
    """``make feedback``: each stage's test cell under a heading with the stage's name and
    score, its report with each hint once and without the bare score nbgrader's
    ``Out[..]`` shows, long lines wrapped, and the formulas as MathML (no MathJax needed)."""

    def preprocess(self, nb, resources):
        chapter = chapter_of(resources.get("nbgrader", {}).get("assignment"))
        stages = stage_cells(nb, chapter) if chapter else {}
        cells = []
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                cell.source = math_as_mathml(cell.source)
            elif index in stages:
                stage = stages[index]
                cell.outputs = [o for o in cell.outputs if o.get("output_type") != "execute_result"]
                for output in cell.outputs:
                    if output.get("output_type") == "stream":
                        output.text = once(output.text)
                points = chapter.points(stage)
                cells.append(nbformat.v4.new_markdown_cell(
                    f'<h3 class="stage-heading">{stage.label}' + (" (bonus)" if stage.bonus else f" ({points:g} points)")
                    + "</h3>"))
            cells.append(cell)
        nb.cells = cells
        inlining = resources.setdefault("inlining", {})
        inlining["css"] = [*inlining.get("css", []), FEEDBACK_CSS]
        return nb, resources
