"""The mistake catalog: realistic wrong submissions must lose points in their own stage and
show the hint that names their mistake; correct submissions in other styles must get full marks.

Layout (tests/catalog/):
- correct/*.py: complete submissions, each defining every stage's names in its own style.
- mistakes/*.py: small files that declare the stage they break (``STAGE``) and words the
  stage row's hint (the one ``make test`` shows) must contain at the level that names the fix
  (``HINT``), and redefine only that stage's names. At the default level no hint of the stage
  holds code of the solution notebook's answers, a fixing value (``dim=-1``) or words that are
  not the student's (support.NOT_FOR_STUDENTS). Each is graded appended to
  correct/book_style.py, so the submission is right everywhere else.
- policy/*.py: correct submissions that call what a stage teaches (a library softmax, PyTorch's
  fused attention): the call policy refuses those stages, and relaxed it gives full marks.

No double jeopardy: a mistake is graded on its own stage and on every stage whose code uses
the names it redefines (the wrapper uses CausalAttention, the GPT-2 builder MultiHeadAttention),
and those other stages must stay at full marks. The stages that do not use them run the base's
code unchanged.

Every entry is graded like the CLI grades a file: ``engine.grade_notebook_file``, with the
student code in the sandboxed worker. A mistake is graded on its own stage only (the other
stages are the base's); the correct ones on all stages. The gradings run in a few spawned
processes at once (one per core): some 70 gradings take two to three minutes on 2 cores.
"""

from __future__ import annotations

import ast
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from support import FIXING_VALUES, NOT_FOR_STUDENTS, TESTS, code_text, pasted_solution, solution_fragments

from autograder.chapters.ch03_attention import CHAPTER
from autograder.core.failures import Hint
from autograder.sandbox.launch import start_fork_server
from autograder.sandbox.settings import Settings

STAGES, stage = CHAPTER.stages, CHAPTER.stage


def at_level(hint: Hint | None, level: int) -> str:
    return hint.text(level) if hint else ""


CATALOG = TESTS / "catalog"
BASE = CATALOG / "correct" / "book_style.py"
MISTAKES = sorted((CATALOG / "mistakes").glob("*.py"))
SOLUTION_CODE = solution_fragments()  # what a default-level hint must not paste
CORRECT = sorted((CATALOG / "correct").glob("*.py"))


@dataclass(frozen=True)
class Mistake:
    path: Path
    stage: int
    hint: str
    about: str  # the file's docstring: what is wrong
    defines: tuple[str, ...]  # the top-level names the file (re)defines
    check_hints: dict  # optional: check id -> words that check's own hint must contain


def read_mistake(path: Path) -> Mistake:
    """The declarations of a mistake file, read without running it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    constants = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                 and node.targets[0].id in ("STAGE", "HINT", "CHECK_HINTS")}
    defines = tuple(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)))
    return Mistake(path, constants.get("STAGE", 0), constants.get("HINT", ""),
                   ast.get_docstring(tree) or "", defines, constants.get("CHECK_HINTS", {}))


@dataclass(frozen=True)
class Grade:
    """What a grading said, reduced to plain data (it crosses a process boundary)."""
    error: str
    stages: tuple[tuple[int, float, float, str, Hint | None], ...]  # number, score, max, summary, hint
    checks: tuple[tuple[str, bool, Hint | None, str], ...] = ()  # id, passed, hint, message

    @property
    def score(self) -> float:
        return sum(s[1] for s in self.stages)

    def describe(self) -> str:
        return "\n".join(f"  stage {n}: {score:g}/{top:g} {summary}\n    hint: {at_level(hint, 2)}"
                         for n, score, top, summary, hint in self.stages) + (f"\n  error: {self.error}"
                                                                              if self.error else "")


GRADED = [s.number for s in STAGES if not s.bonus]  # the course's total; bonus stages never lower it


def grade(job: tuple[str, str, list[int]]) -> Grade:
    """Grade ``source`` (written to ``path``) on the given stages."""
    path, source, stage_numbers = job
    from autograder.core.engine import grade_notebook_file

    Path(path).write_text(source)
    report = grade_notebook_file(path, CHAPTER, stage_numbers, "cpu")
    # the hints whole: the tests read them at each level
    return Grade(report.error, tuple((r.stage.number, r.score, r.max_score, r.summary, r.diagnosis)
                                     for r in report.stages),
                 tuple((c.check.id, bool(c.score), c.diagnosis, c.message) for c in report.checks))


def _references(source: str) -> dict[str, set[str]]:
    """The global names each top-level function or class of ``source`` refers to."""
    tree = ast.parse(source)
    return {node.name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        b.id for b in getattr(node, "bases", []) if isinstance(b, ast.Name)}
        for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def stages_using(number: int) -> list[int]:
    """The other graded stages whose code in the base uses a name of stage ``number`` (directly
    or through another name)."""
    refs = _references(BASE.read_text())
    changed = set(stage(number).names)
    uses = set()
    while True:
        more = {name for name, used in refs.items() if used & (changed | uses)} - changed - uses
        if not more:
            break
        uses |= more
    return [s.number for s in STAGES if s.number in GRADED and s.number != number and set(s.names) & uses]


BONUS_BASE = CATALOG / "efficiency_base.py"  # stage 8, which the book (and so the base) lacks


def mistake_submission(mistake: Mistake) -> str:
    base = BASE.read_text()
    if stage(mistake.stage).bonus:
        base += f"\n\n# ---- the bonus stage ----\n{BONUS_BASE.read_text()}"
    return f"{base}\n\n# ---- the mistake: {mistake.path.name} ----\n{mistake.path.read_text()}"


def grading_job(path: Path, folder: Path) -> tuple[str, str, list[int]]:
    if path.parent.name == "mistakes":
        mistake = read_mistake(path)
        return (str(folder / f"mistake_{path.name}"), mistake_submission(mistake),
                [mistake.stage, *stages_using(mistake.stage)])
    return str(folder / f"correct_{path.name}"), path.read_text(), GRADED


class Grades(dict):
    """Grades by catalog path; one missing from the batch graded up front is graded on demand,
    in ``pool`` when given."""

    def __init__(self, folder: Path, graded: dict, pool: ProcessPoolExecutor | None = None):
        super().__init__(graded)
        self.folder, self.pool = folder, pool

    def __missing__(self, path: Path) -> Grade:
        job = grading_job(path, self.folder)
        self[path] = self.pool.submit(grade, job).result() if self.pool else grade(job)
        return self[path]


def grading_pool(workers: int) -> ProcessPoolExecutor:
    """Spawned processes (not forks: the test process has torch's thread pools running) whose
    workers are forks of a preloaded server, as make autograde's are: the whole catalog is
    graded through that path too (tests/e2e/test_forkserver.py compares it with fresh workers)."""
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=start_fork_server)


@pytest.fixture(scope="session")
def catalog_grades(request, tmp_path_factory):
    """Grades of the catalog entries this session runs, graded up front in parallel, one
    process per core. Under pytest-xdist (make check) this module runs on one xdist worker while
    the others run other modules: it grades each entry as its test comes, in one process."""
    folder = tmp_path_factory.mktemp("catalog")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        with grading_pool(1) as pool:
            yield Grades(folder, {}, pool)
        return
    wanted = sorted(_catalog_paths(request.session.items))
    jobs = [grading_job(path, folder) for path in wanted]
    with grading_pool(max(1, min(len(jobs), os.cpu_count() or 1, 4))) as pool:
        yield Grades(folder, dict(zip(wanted, pool.map(grade, jobs))))


def _catalog_paths(items) -> set[Path]:
    """The catalog files graded by the selected tests of this module."""
    in_course = {s.number for s in STAGES}
    return {path for path in (item.callspec.params["path"] for item in items
                              if item.module.__name__ == __name__ and hasattr(item, "callspec")
                              and "path" in item.callspec.params
                              and item.originalname in ("test_mistake_is_caught_with_its_hint",
                                                        "test_correct_variant_gets_full_marks"))
            if path.parent.name != "mistakes" or read_mistake(path).stage in in_course}


# -- the catalog itself ------------------------------------------------------------------

def test_catalog_covers_every_stage():
    mistakes = [read_mistake(p) for p in MISTAKES]
    assert len(mistakes) >= 30, f"only {len(mistakes)} catalogued mistakes"
    assert len(CORRECT) >= 5, f"only {len(CORRECT)} correct variants"
    uncovered = set(GRADED) - {m.stage for m in mistakes}
    assert not uncovered, f"no catalogued mistake for stage(s) {sorted(uncovered)}"


@pytest.mark.parametrize("path", MISTAKES, ids=lambda p: p.stem)
def test_mistake_file_is_well_formed(path):
    """Each file says what is wrong, which stage it breaks and what the hint must say, and
    redefines names of that stage only."""
    mistake = read_mistake(path)
    assert mistake.about, "start the file with a docstring saying what is wrong"
    declared = {s.number: s for s in CHAPTER.declared_stages}  # a stage the course dropped is still one
    assert mistake.stage in declared, f"STAGE = {mistake.stage!r} is no stage"
    assert mistake.hint.strip(), "HINT must hold words the stage's hint has to contain"
    names = set(declared[mistake.stage].names)
    assert mistake.defines and set(mistake.defines) <= names, (
        f"defines {mistake.defines}; a stage-{mistake.stage} mistake redefines only {sorted(names)}")


# -- the gradings --------------------------------------------------------------------------

@pytest.mark.parametrize("path", MISTAKES, ids=lambda p: p.stem)
def test_mistake_is_caught_with_its_hint(path, catalog_grades, record_property):
    record_property("catalog", "mistake")
    mistake = read_mistake(path)
    if mistake.stage not in {s.number for s in STAGES}:
        pytest.skip(f"stage {mistake.stage} is not in this course (the source notebook has no cells for it)")
    graded = catalog_grades[path]
    assert not graded.error, f"could not grade {path.name}: {graded.error}"
    # the grader's own exceptions never reach a student: each failing check says what is wrong
    assert not [c for c in graded.checks if "could not be checked" in c[3]], graded.describe()
    rows = {row[0]: row for row in graded.stages}
    number, score, top, summary, diagnosis = rows.pop(mistake.stage)
    assert score < top, f"{path.name} ({mistake.about}) got full marks in stage {number}"
    hint, default = at_level(diagnosis, 2), at_level(diagnosis, Settings.hint_level)
    # the default level says what is wrong and holds no code of the solution's answers but what the student wrote
    assert default.strip(), f"{path.name}: the default-level hint is empty ({hint!r})"
    pasted = [f for f in pasted_solution(default, SOLUTION_CODE) if f not in code_text(path.read_text())]
    assert not pasted, f"{path.name}: the default-level hint holds the solution's code {pasted}: {default!r}"
    # nor does any failed check's (the test cell shows them all): no fixing value, no words not the student's
    for text in [default] + [at_level(h, Settings.hint_level) for check_id, passed, h, _ in graded.checks
                             if not passed and check_id.split(".")[0] == str(number)]:
        found = FIXING_VALUES.search(text) or NOT_FOR_STUDENTS.search(text)
        assert not found, f"{path.name}: a default-level hint holds {found.group(0)!r}: {text!r}"
    assert mistake.hint.lower() in hint.lower(), (
        f"{path.name} ({mistake.about}) lost points in stage {number}, but the hint does not say "
        f"{mistake.hint!r}:\n{graded.describe()}")
    record_property("caught", True)
    # a check named in CHECK_HINTS must fail with its own hint naming the mistake too
    by_id = {check_id: (passed, words) for check_id, passed, words, _ in graded.checks}
    for check_id, words in mistake.check_hints.items():
        passed, check_hint = by_id[check_id]
        check_hint = at_level(check_hint, 2)
        assert not passed and words.lower() in check_hint.lower(), (
            f"{path.name}: check {check_id} {'passed' if passed else 'says ' + repr(check_hint)}, "
            f"expected a failure naming {words!r}")
    # no double jeopardy: the stages that use the mistaken names judge their own code only,
    # with the book's class in place of a broken one (and say so in their row)
    for other, other_score, other_top, other_summary, _ in rows.values():
        assert other_score == other_top, (
            f"{path.name} ({mistake.about}) also costs points in stage {other}: {other_summary}\n{graded.describe()}")


# A class that raises at every size: the stage built on it runs with the book's class, says so,
# and earns its points on its own code (before, 7.4 showed a ✓ for a run that never happened)
BUILT_ON_THE_BOOKS = {"s4_float_mask_in_masked_fill.py": (5, "the book's CausalAttention as its heads"),
                      "s6_view_without_contiguous.py": (7, "the book's MultiHeadAttention")}


@pytest.mark.parametrize("name", sorted(BUILT_ON_THE_BOOKS))
def test_a_stage_built_on_a_broken_class_runs_with_the_books_and_says_so(name, catalog_grades):
    number, words = BUILT_ON_THE_BOOKS[name]
    graded = catalog_grades[CATALOG / "mistakes" / name]
    _, score, top, summary, _ = next(row for row in graded.stages if row[0] == number)
    assert score == top and f"graded with {words}" in summary, graded.describe()


# One slip costs one check: these mistakes fail that check alone and keep the rest of their stage
ONE_SLIP = {"s4_mask_as_parameter.py": "4.2", "s1_exp_in_place.py": "1.4", "s4_additive_mask_in_buffer.py": "4.9"}


@pytest.mark.parametrize("name", sorted(ONE_SLIP))
def test_one_slip_costs_one_check(name, catalog_grades):
    graded = catalog_grades[CATALOG / "mistakes" / name]
    assert [check_id for check_id, passed, _, _ in graded.checks if not passed] == [ONE_SLIP[name]], graded.describe()
    _, score, top, _, _ = next(row for row in graded.stages if row[0] == read_mistake(CATALOG / "mistakes" / name).stage)
    assert score >= top / 2, graded.describe()


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_correct_variant_gets_full_marks(path, catalog_grades, record_property):
    record_property("catalog", "correct")
    graded = catalog_grades[path]
    assert not graded.error, f"could not grade {path.name}: {graded.error}"
    assert [s[0] for s in graded.stages] == GRADED
    most = CHAPTER.max_score
    assert graded.score == most, f"{path.name} is correct but got {graded.score:g}/{most:g}:\n{graded.describe()}"
    assert not any("graded with the book's" in s[3] for s in graded.stages), graded.describe()  # its own classes
    record_property("full_marks", True)


# -- on a GPU ----------------------------------------------------------------------------------

GPU_ONLY = ["s4_mask_plain_attribute.py", "s4_mask_built_in_forward_on_cpu.py", "s4_mask_in_forward_inplace_on_cpu.py",
            "s4_arange_mask_on_cpu.py"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="no CUDA device here; on the CPU the device check stands in for it (stage 4.7)")
def test_on_cuda_the_book_style_is_right_and_the_device_mistakes_break(tmp_path):
    """The mistakes the device check predicts on the CPU really break on a GPU, with the same hint."""
    from autograder.core.engine import grade_notebook_file

    report = grade_notebook_file(str(CATALOG / "correct" / "book_style.py"), CHAPTER, GRADED, "cuda")
    assert report.score == CHAPTER.max_score, "\n".join(f"{r.stage.label}: {r.summary} | {r.hint}" for r in report.stages)
    for name in GPU_ONLY:
        mistake = read_mistake(CATALOG / "mistakes" / name)
        path = tmp_path / name
        path.write_text(mistake_submission(mistake))
        [result] = grade_notebook_file(str(path), CHAPTER, [mistake.stage], "cuda").stages
        assert result.score < result.max_score, name
        assert mistake.hint.lower() in " ".join(at_level(c.diagnosis, 2).lower() for c in result.failures), (name, result.hint)


# -- the call policy -----------------------------------------------------------------------------

POLICY = sorted((CATALOG / "policy").glob("*.py"))


def _refused(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", "") == "REFUSED")


@pytest.mark.parametrize("path", POLICY, ids=lambda p: p.stem)
def test_the_call_policy_refuses_what_a_stage_teaches_and_relaxed_accepts_it(path, tmp_path):
    """A correct submission that calls what a stage teaches (a library softmax, PyTorch's fused
    attention) earns 0 in that stage, with a message saying why, and nothing less elsewhere
    (the stages that use it are not charged); with the policy relaxed it gets full marks."""
    from autograder.core.engine import grade_notebook_file
    from autograder.sandbox.settings import Settings

    refused = _refused(path)
    complete = "class CausalAttention" in path.read_text()
    submission = tmp_path / path.name
    submission.write_text(path.read_text() if complete else f"{BASE.read_text()}\n\n{path.read_text()}")
    users = sorted({n for r in refused for n in stages_using(r)} - set(refused))
    report = grade_notebook_file(str(submission), CHAPTER, refused + users, "cpu", Settings())
    for result in report.stages:
        if result.stage.number in refused:
            assert result.score == 0, (path.name, result.stage.number, result.summary)
            assert "does the work this stage teaches" in result.summary, result.summary
            assert "write the attention yourself" in result.hint or "softmax itself" in result.hint, result.hint
        else:
            assert result.score == result.max_score, (path.name, result.stage.number, result.summary)
    relaxed = grade_notebook_file(str(submission), CHAPTER, refused, "cpu", Settings(allow_library_attention=True))
    assert relaxed.score == relaxed.max_score, [(r.stage.number, r.summary) for r in relaxed.stages]
