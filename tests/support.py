"""What the tests share besides fixtures: the repository's paths and the graders' entry points.

Test files import it as ``from support import REPO, run_grader`` (pyproject.toml puts tests/ on
sys.path); tests/conftest.py holds the fixtures built on it and re-exports these names."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SOLUTION = REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
RELEASE = REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb"
# The course repository's Makefile, which includes the students' (their repository's Makefile).
STUDENTS_MAKEFILE = REPO / "students.mk"


def makefile_text() -> str:
    """Both Makefiles' text: the course repository's commands are the two together."""
    return (REPO / "Makefile").read_text(encoding="utf-8") + "\n" + STUDENTS_MAKEFILE.read_text(encoding="utf-8")


def every_declared_stage(chapter):
    """``chapter`` grading every stage it declares, each out of its checks' weights, its course's
    bonus a bonus: the grader's machinery tested whatever the instructor's course leaves out."""
    from autograder.core.course import Course, StagePoints

    bare = dataclasses.replace(chapter, course_path=None, course_override=None)
    bonus = {n for n, p in chapter.course.stages.items() if p.bonus} if chapter.course else set()
    return dataclasses.replace(bare, course_override=Course(
        {s.number: StagePoints(bare.points(s), s.number in bonus) for s in bare.declared_stages}, "every stage"))


def chapter_of(chapter_id: str, stages, *checks, **options):
    """A chapter of ``stages`` (each in a stage module made here and put in sys.modules) whose
    stage modules hold ``checks`` (functions marked with @check), each in its stage's module;
    ``options``: the Chapter's other fields."""
    import types

    from autograder.core.chapter import Chapter, StageParts

    names = []
    for stage in stages:
        name = f"{chapter_id}_stage{stage.number}"
        module = types.ModuleType(name)
        module.STAGE = StageParts(stage)
        for fn in checks:
            if fn.check_spec.id.split(".")[0] == str(stage.number):
                fn.__module__ = name
                setattr(module, f"check_{fn.check_spec.id.replace('.', '_')}", fn)
        sys.modules[name] = module
        names.append(name)
    return Chapter(chapter_id, chapter_id.title(), tuple(names), **options)


def bonus_max(chapter) -> float:
    return sum(chapter.points(s) for s in chapter.stages if s.bonus)


def total_words(chapter, score: float | None = None, bonus: float | None = None) -> str:
    """The report's total line for ``score`` (default: full marks) and ``bonus`` (default: all of
    it), out of the chapter's course: "Total: 100/100 (+10/10 bonus)"; no bonus part without one."""
    most, extra = chapter.max_score, bonus_max(chapter)
    score, bonus = most if score is None else score, extra if bonus is None else bonus
    return f"Total: {score:g}/{most:g}" + (f" (+{bonus:g}/{extra:g} bonus)" if extra else "")


def nbgrader_setting(name: str, root: Path = REPO) -> float:
    """The number ``nbgrader_config.py`` sets for ``name`` ("LatePenalty.per_day"): what an
    instructor's edit there makes it, read as the docs' facts read it (tests/unit/test_docs.py)."""
    import re

    text = (root / "nbgrader_config.py").read_text(encoding="utf-8")
    return float(re.search(rf"^c\.{re.escape(name)}\s*=\s*([\d.]+)", text, re.M).group(1))


def late_penalty(score: float, days_started: int) -> float:
    """The points nbgrader_config.py's LatePenalty takes from ``score`` for work late by
    ``days_started`` days or parts of one, rounded as nbgrader stores it."""
    share = min(days_started * nbgrader_setting("LatePenalty.per_day"), nbgrader_setting("LatePenalty.cap"))
    return round(score * share, 2)


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    results: dict | None


def link_venv(course: Path, venv: Path | None = None) -> None:
    """``venv`` (default: this test's) as ``course/.venv``, where the Makefile looks by default.
    Make cannot take a path with spaces as VENV (its rules name the venv's stamp files), and a
    checkout under "My Courses (2027)/..." would hand it one."""
    link = course / ".venv"
    if not link.exists():
        link.symlink_to(venv or Path(sys.executable).parent.parent, target_is_directory=True)


def run_grader(submission: Path, tmp_path: Path, *args: str, timeout: float = 600, env: dict | None = None) -> CliRun:
    """Grade through the real command line, as a student or CI would, in a minimal environment
    (``env``: variables added to it)."""
    results = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", str(submission), "--results", str(results), *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **(env or {})},
    )
    data = json.loads(results.read_text()) if results.exists() else None
    return CliRun(proc.returncode, proc.stdout, proc.stderr, data)


def grade_in_process(chapter, stage, namespace: dict, **options):
    """Grade ``stage`` on the names in ``namespace`` in this process, as a notebook's test cell
    does in the student's kernel (no worker): the engine's ``run_stage`` over a LocalTransport."""
    from autograder.core.engine import run_stage
    from autograder.core.submission import LocalTransport, Submission

    return run_stage(chapter, stage, Submission(LocalTransport(namespace), stage.label), **options)


def solution_fragments(notebook: Path = SOLUTION, min_chars: int = 10) -> set[str]:
    """The code a solution cell holds between ``### BEGIN SOLUTION`` and ``### END SOLUTION``,
    as fragments a hint could paste: every call, product, subscript and assignment there, as
    :func:`code_text` writes it, of at least ``min_chars`` characters (``keys.T`` or ``x.exp()``
    name a step; ``exp_x.sum(dim=-1, keepdim=True)`` is the line)."""
    import ast

    fragments = set()
    for cell in json.loads(notebook.read_text())["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] != "code" or "### BEGIN SOLUTION" not in source:
            continue
        lines = source.splitlines()
        begins = [i + 1 for i, line in enumerate(lines) if "### BEGIN SOLUTION" in line]
        ends = [i + 1 for i, line in enumerate(lines) if "### END SOLUTION" in line]
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.Call, ast.BinOp, ast.Subscript, ast.Compare, ast.Assign, ast.Return)):
                continue
            if not any(b <= node.lineno <= e for b, e in zip(begins, ends)):
                continue
            text = code_text(ast.unparse(node.value if isinstance(node, ast.Return) and node.value else node))
            if len(text) >= min_chars:
                fragments.add(text)
    return fragments


def code_text(text: str) -> str:
    """``text`` with its spaces and quotes made uniform, to find code in prose."""
    import re

    return re.sub(r"\s+", "", text).replace("'", '"').replace("`", "")


# What no student-facing text holds (issue 46): the instructor's commands and paths, the grader's own
# words, malformed code, a line without its number, a traceback
NOT_FOR_STUDENTS = re.compile("|".join((
    r"make student-repo", r"make bench\b", r"make gradescope", r"HIDDEN_EXAMPLES", r"(?<![\w.])solutions/",
    r"fingerprinted", r"the release's", r"a modified grader", r"'meta' device", r"the other stages were still graded",
    r"same report row", r"\[:num_tokens:num_tokens\]", r"\bline\)", r"Traceback \(most recent call last\)")))

# The values that fix a mistake: a hint at the default level says what is wrong, never these
FIXING_VALUES = re.compile(r"(?<![\w.])(dim\s*=\s*-1|keepdim\s*=\s*True|bias\s*=\s*qkv_bias|diagonal\s*=\s*1\b|"
                           r"dropout(_p)?\s*=\s*(0\.0|self\.)|context_length\s*=\s*1024|num_heads\s*=\s*12|"
                           r"d_in\s*=\s*d_out\s*=\s*768|is_causal\s*=\s*True)")


def pasted_solution(hint: str, fragments: set[str]) -> list[str]:
    """The solution fragments ``hint`` holds."""
    said = code_text(hint)
    return sorted(f for f in fragments if f in said)
