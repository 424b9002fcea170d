"""The docs cannot drift: README.md, docs/**/*.md and the students' README template are
checked against the code they describe.

Four checkers, each a function of one page's text that returns problems (empty: fine), used by
the real tests over every page and by tests that plant one mistake each:

- :func:`link_problems`: a relative link to a missing file, or to a heading that is not there
  (GitHub's anchor slugs);
- :func:`target_problems`: ``make <target>`` in code where the Makefile has no such target
  (the students' pages: the students' Makefile, which has far fewer);
- :func:`option_problems`: ``--option`` after ``python -m autograder...`` or ``ch03-grade``
  that the named module's parser does not define;
- :func:`fact_problems`: a number the code no longer has, for the named facts of
  :func:`facts` (each a value computed from the code and a pattern over the docs).

Module paths are derived (the installed console script, ``python -m`` names as written in the
docs, the module defining ``student_makefile``), so a module that moves is found again, and a
module the docs name that no longer exists is reported.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import nbgrader_setting

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "autograder" / "frontends" / "instructors" / "templates" / "student_README.md"
# Pages for students: they run in the students' repository, whose Makefile has only the
# student targets (see student_repo.py), and never reach docs/ from there.
STUDENT_PAGES = {"docs/students.md", TEMPLATE.relative_to(REPO).as_posix()}
# What the students' repository holds besides autograder/ (its README may link only these).
STUDENT_REPO_FILES = ("assignments/", "autograder/", "Makefile", "pyproject.toml", "constraints.txt",
                      ".gitignore", ".github/workflows/grade.yml", "README.md")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), TEMPLATE]


def rel(page: Path) -> str:
    return page.relative_to(REPO).as_posix() if page.is_relative_to(REPO) else page.as_posix()


# --- Markdown -----------------------------------------------------------------------------

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def prose(text: str) -> str:
    """The text without fenced blocks and code spans (links inside code are not links)."""
    return _SPAN.sub(" ", _FENCE.sub(" ", text))


def code(text: str) -> list[str]:
    """Every line of code: the lines of fenced blocks and each inline code span."""
    lines = []
    for block in _FENCE.finditer(text):
        lines += block.group(0).splitlines()[1:-1]
    lines += [m.group(2) for m in _SPAN.finditer(_FENCE.sub(" ", text))]
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lowercase, punctuation but - and _
    dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown page's headings (a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for line in _FENCE.sub("", text).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        n = seen.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return found


# --- links --------------------------------------------------------------------------------

_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def link_problems(text: str, page: Path, root: Path = REPO, student_repo: bool = False) -> list[str]:
    """Relative links of ``text`` (the page at ``page``) to a missing file or anchor."""
    problems = []
    for target in _LINK.findall(prose(text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or "{" in target:  # https:, mailto:, a template field
            continue
        path, _, anchor = target.partition("#")
        if student_repo:
            if path and not any(path == f or (f.endswith("/") and path.startswith(f)) for f in STUDENT_REPO_FILES):
                problems.append(f"link to {target}: the students' repository has no {path}")
            continue
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            problems.append(f"link to {target}: no file {path}")
        elif path.startswith("../") and root not in file.parents:
            problems.append(f"link to {target}: outside the repository (a dead link in every clone)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(text if not path else file.read_text(encoding="utf-8")):
            problems.append(f"link to {target}: {file.relative_to(root).as_posix()} has no heading #{anchor}")
    return problems


# --- make targets -------------------------------------------------------------------------

# A path into the repository quoted as code (`tests/e2e/test_ci.py`, `autograder/sandbox/`):
# it must exist, so that a moved or renamed file cannot leave a page pointing at nothing.
_REPO_PATH = re.compile(r"(?<![\w./-])((?:autograder|tests|docs|solutions|assignments)/[\w./<>*-]*[\w/])(?:::\w+)?")


def _generated_paths() -> set[str]:
    """Files the code writes into the students' repository, which this one does not hold."""
    return {importlib.import_module("autograder.frontends.fingerprint").RELEASE_FILE}


def path_problems(text: str, root: Path = REPO) -> list[str]:
    problems = []
    for line in code(text):
        for match in _REPO_PATH.finditer(line):
            path = match.group(1)
            if any(c in path for c in "<>*"):  # a pattern, not a path
                continue
            if not (root / path).exists() and path not in _generated_paths():
                problems.append(f"`{path}`: no such file or folder")
    return sorted(set(problems))


def makefile_targets(text: str) -> set[str]:
    """The targets a Makefile defines (rules, not variables or special targets)."""
    targets = set()
    for line in text.splitlines():
        if line.startswith(("\t", "#", ".")):
            continue
        match = re.match(r"^([^:=#]+?)\s*::?(?!=)", line)
        if match:
            targets |= {t for t in match.group(1).split() if "$" not in t and "%" not in t}
    return targets


@functools.cache
def course_targets() -> frozenset[str]:
    from support import makefile_text

    return frozenset(makefile_targets(makefile_text()))


def _module_defining(name: str) -> str:
    """The dotted name of the autograder module that defines the function ``name``."""
    for path in sorted((REPO / "autograder").rglob("*.py")):
        if re.search(rf"^def {name}\(", path.read_text(encoding="utf-8"), re.M):
            return ".".join(path.relative_to(REPO).with_suffix("").parts)
    raise LookupError(f"no module of autograder defines {name}()")


@functools.cache
def student_targets() -> frozenset[str]:
    """The targets of the students' Makefile, as ``make student-repo`` writes it."""
    return frozenset(makefile_targets((REPO / "students.mk").read_text(encoding="utf-8")))


_MAKE = re.compile(r"(?:^|[\s;&|(])make\s+((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)([a-z][a-z0-9_-]*)\b(?!=)")


def target_problems(text: str, targets: set[str] | frozenset[str]) -> list[str]:
    """``make <target>`` in the code of ``text`` where ``targets`` has no such target."""
    problems = []
    for line in code(text):
        for match in _MAKE.finditer(line):
            if match.group(2) not in targets:
                problems.append(f"`make {match.group(2)}`: no such target")
    return sorted(set(problems))


# --- CLI options --------------------------------------------------------------------------

_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_COMMAND = re.compile(r"(?:python3?|\.venv/bin/python|\S*/python)\s+-m\s+(autograder[\w.]*)(?:\s+([a-z][\w-]*)\b)?"
                      r"|\b(ch03-grade)\b")


def _command_module(match: re.Match) -> str:
    """The module a grader command line runs: ``python -m autograder COMMAND`` (the grading without
    one), ``python -m autograder.x.y``, or a console script."""
    from autograder.frontends.commands import COMMANDS

    if match.group(3):
        return _console_script(match.group(3))
    if match.group(1) == "autograder":
        return COMMANDS[match.group(2) if match.group(2) in COMMANDS else "grade"][0]
    return match.group(1)


def _console_script(name: str) -> str:
    """The module of a console script in pyproject.toml's [project.scripts] (no tomllib: 3.10)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S).group(1)
    return re.search(rf'^{re.escape(name)}\s*=\s*"([\w.]+):', table, re.M).group(1)


def _source(module: str, run: bool = True) -> Path | None:
    """The file of an autograder module, found on disk (importing a front end would import
    nbgrader and more): ``package/__main__.py`` where ``python -m package`` runs it."""
    base = REPO.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if run and (base / "__main__.py").is_file():
        return base / "__main__.py"
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _imported_autograder_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("autograder"):
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("autograder")}
    return names


@functools.cache
def module_options(module: str) -> frozenset[str] | None:
    """The ``--options`` the parsers of ``module`` define (its own ``add_argument`` calls and
    those of the autograder modules it imports, two levels deep); None: no such module."""
    first = _source(module)
    if first is None:
        return None
    options: set[str] = set()
    seen, frontier = set(), {first}
    for _ in range(3):
        following = set()
        for path in frontier - seen:
            seen.add(path)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                    options |= {a.value for a in node.args if isinstance(a, ast.Constant)
                                and isinstance(a.value, str) and a.value.startswith("--")}
            for name in _imported_autograder_modules(tree):
                found = _source(name, run=False)
                if found is not None:
                    following.add(found)
        frontier = following
    return frozenset(options | {"--help"})


def option_problems(text: str) -> list[str]:
    """``--options`` after a grader command in the code of ``text`` that its parser lacks."""
    problems = []
    for line in code(text):
        matches = list(_COMMAND.finditer(line))
        for i, match in enumerate(matches):
            module = _command_module(match)
            end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
            rest = re.split(r"&&|\|\||[|;)]", line[match.end():end])[0]
            known = module_options(module)
            if known is None:
                problems.append(f"`python -m {module}`: no such module")
                continue
            problems += [f"`{match.group(0)} {opt}`: {module} has no option {opt}"
                         for opt in _OPTION.findall(rest) if opt not in known]
    return sorted(set(problems))


# --- numbers ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fact:
    """A number the docs quote: ``value`` computed from the code, and ``pattern``, whose group
    ``value`` must equal it wherever it matches (group ``key`` picks an entry of a dict)."""
    name: str
    value: object
    pattern: str


def _number(text: str) -> float:
    return float(text.replace(",", ""))


@functools.cache
def facts() -> tuple[Fact, ...]:
    from autograder.chapters import load

    chapter = load()
    points = {s.id: chapter.points(s) for s in chapter.stages}
    limits = importlib.import_module(_module_defining_class("Limits")).Limits()
    catalog = REPO / "tests" / "catalog"
    examples = importlib.import_module(_module_defining_variable("EXAMPLES")).EXAMPLES
    gib = 2**30
    return (
        # | 4 | `causal` | ... | 20 |  (a bonus: 10 bonus)
        Fact("points per stage", points, r"^\|\s*\d+\s*\|\s*`(?P<key>\w+)`\s*\|.*\|\s*\+?(?P<value>[\d.]+)(?: bonus)?\s*\|\s*$"),
        Fact("the grade's maximum", chapter.max_score,
             r"(?:out of|Total: \d+/|full marks,? )\s*(?P<value>\d+)\b(?! (?:s|seconds|GiB|tokens|submissions))"),
        # (a course that drops the bonus leaves the docs' passages on the chapter's lab unchecked)
        *([Fact("bonus points", sum(p for s, p in points.items() if chapter.stage(s).bonus),
                r"\+(?:\d+/)?(?P<value>\d+)(?: bonus|\b\s*\|\s*$)")]
          if any(s.bonus for s in chapter.stages) else []),
        Fact("catalogued mistakes", len(list((catalog / "mistakes").glob("*.py"))),
             r"(?<![\w-])(?P<value>\d+) (?:catalogued )?mistakes\b|mistake catalog: \d+/(?P<value2>\d+)"
             r"|(?P<value3>\d+) in `tests/catalog`"),
        Fact("mistakes caught", len(list((catalog / "mistakes").glob("*.py"))), r"mistake catalog: (?P<value>\d+)/"),
        Fact("correct variants", len(list((catalog / "correct").glob("*.py"))),
             r"(?P<value>\d+) complete submissions"),
        Fact("GPT-2 small MHA parameters", _gpt2_parameters(), r"(?P<value>\d[\d,]{6,}) parameters"),
        Fact("seconds per cell", limits.cell_seconds, r"(?P<value>\d+) s per cell|cell while loading \| (?P<value2>\d+) s"),
        Fact("seconds per cell (nbgrader)", limits.cell_seconds,  # SandboxExecute.cell_timeout, Limits' by default
             r"stopped after (?P<value>\d+) s \(`c\.SandboxExecute"),
        Fact("seconds per stage", limits.stage_seconds, r"(?P<value>\d+) s (?:per|for the checks of one) stage"
             r"|checks of one stage \| (?P<value2>\d+) s"),
        Fact("seconds per grading", limits.total_seconds,
             r"(?P<value>\d+) s (?:per grading|for the\s+whole grading)|grading (?:itself )?stops at (?P<value2>\d+) s"
             r"|whole grading, loading included \| (?P<value3>\d+) s"),
        Fact("memory GiB", limits.memory_bytes / gib, r"(?P<value>\d+) GiB (?:of memory|per process)"
             r"|memory \(CPU\) \| (?P<value2>\d+) GiB"),
        Fact("scratch GiB", limits.scratch_bytes / gib, r"(?P<value>\d+) GiB (?:for all|in all)"),
        Fact("late penalty per day", nbgrader_setting("LatePenalty.per_day"), r"`per_day` \((?P<value>[\d.]+)\)"),
        Fact("late penalty cap", nbgrader_setting("LatePenalty.cap"), r"`cap` \((?P<value>[\d.]+)\)"),
        Fact("pinned torch", _pinned_torch(),
             r"torch==(?P<value>\d+\.\d+\.\d+)|PyTorch (?P<value2>\d+\.\d+\.\d+) \(pinned|the pinned (?P<value3>\d+\.\d+\.\d+)"),
        Fact("hypothesis examples per property", examples["function"],
             r"(?P<value>\d+) per property for functions|became (?P<value2>\d+)/\d+/\d+"),
        Fact("hypothesis examples per module", examples["module"],
             r"for functions, (?P<value>\d+) for modules|became \d+/(?P<value2>\d+)/\d+"),
        Fact("hypothesis examples per cheap module", examples["cheap_module"],
             r"(?P<value>\d+)\s+for cheap modules|became \d+/\d+/(?P<value2>\d+)"),
    )


def _module_defining_class(name: str) -> str:
    return _module_matching(rf"^class {name}\b", f"class {name}")


def _module_defining_variable(name: str) -> str:
    return _module_matching(rf"^{name}\s*(?::[^=]+)?=", name)


def _module_matching(pattern: str, what: str) -> str:
    """The dotted name of the autograder module whose source matches ``pattern`` (found again
    wherever a refactor moves it)."""
    for path in sorted((REPO / "autograder").rglob("*.py")):
        if re.search(pattern, path.read_text(encoding="utf-8"), re.M):
            return ".".join(path.relative_to(REPO).with_suffix("").parts)
    raise LookupError(f"no module of autograder defines {what}")


def _gpt2_parameters() -> int:
    """The solutions' MultiHeadAttention (the reference module) at GPT-2 small's sizes as the
    chapter states them (stage 7), counted."""
    import json
    import math

    import torch
    from torch import nn

    gpt2 = importlib.import_module("autograder.chapters.ch03_attention.checks.s7_gpt2")
    notebook = json.loads((REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb").read_text())
    cell = next("".join(c["source"]) for c in notebook["cells"]
                if c["cell_type"] == "code" and "class MultiHeadAttention(" in "".join(c["source"]))
    namespace = {"torch": torch, "nn": nn, "math": math}
    exec(compile(cell, "MultiHeadAttention", "exec"), namespace)  # the instructor's own solution
    module = namespace["MultiHeadAttention"](**gpt2.SIZE)  # 9 MB on the CPU: milliseconds
    return sum(p.numel() for p in module.parameters())


def _pinned_torch() -> str:
    return re.search(r"^torch==(\S+)", (REPO / "constraints.txt").read_text(), re.M).group(1)


def _same(quoted: str, value: object) -> bool:
    if isinstance(value, str):
        return quoted == value
    return _number(quoted) == float(value)


def fact_problems(text: str, fact_list=None) -> list[str]:
    """Every match of a fact's pattern in ``text`` whose number is not the fact's value."""
    problems = []
    for fact in fact_list or facts():
        for match in re.finditer(fact.pattern, text, re.M):
            groups = match.groupdict()
            quoted = next((v for k, v in sorted(groups.items()) if k.startswith("value") and v), None)
            if quoted is None:
                continue
            value = fact.value
            if isinstance(value, dict):
                if groups.get("key") not in value:
                    continue
                value = value[groups["key"]]
            if not _same(quoted, value):
                line = text.count("\n", 0, match.start()) + 1
                shown = value if isinstance(value, str) else f"{float(value):g}"
                problems.append(f"line {line}: {fact.name} quoted as {quoted}, the code has {shown}")
    return problems


# --- the real pages -----------------------------------------------------------------------

PAGES = pages()
IDS = [rel(p) for p in PAGES]


def test_the_pages_exist_and_the_readme_is_a_landing_page():
    assert (REPO / "docs" / "students.md").exists() and TEMPLATE.exists()
    for route in ("classroom50", "github-organizations", "nbgrader", "gradescope", "colab-kaggle", "class-report"):
        assert (REPO / "docs" / "instructors" / f"{route}.md").exists(), route
    assert (REPO / "README.md").stat().st_size <= 10 * 1024
    # GitHub Classroom closed on 2026-08-28: no page sends an instructor there.
    assert not [rel(p) for p in PAGES if "classroom.github.com" in p.read_text() or "gh classroom" in p.read_text()]


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_links_resolve(page):
    assert link_problems(page.read_text(encoding="utf-8"), page, student_repo=page == TEMPLATE) == []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_quoted_paths_exist(page):
    assert path_problems(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_make_targets_exist(page):
    targets = student_targets() if rel(page) in STUDENT_PAGES else course_targets()
    assert target_problems(page.read_text(encoding="utf-8"), targets) == []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_cli_options_exist(page):
    assert option_problems(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_quoted_numbers_are_the_codes(page):
    assert fact_problems(page.read_text(encoding="utf-8")) == []


def test_the_facts_are_found_in_the_docs():
    """Each fact's pattern matches somewhere: a pattern that matches nothing checks nothing."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    unmatched = [f.name for f in facts() if not re.search(f.pattern, text, re.M)]
    assert unmatched == []


def test_the_facts_are_what_the_code_says():
    by_name = {f.name: f.value for f in facts()}
    assert by_name["GPT-2 small MHA parameters"] == 4 * 768 * 768 + 768
    assert by_name["GPT-2 small MHA parameters"] == importlib.import_module(
        "autograder.chapters.ch03_attention.checks.s7_gpt2").PARAMS
    assert by_name["catalogued mistakes"] == len(list((REPO / "tests" / "catalog" / "mistakes").glob("*.py")))


def test_no_module_is_longer_than_the_architecture_says():
    said = re.search(r"No module in `autograder/` is\s+over (\d+) lines", (REPO / "docs" / "maintainers.md").read_text(encoding="utf-8"))
    assert said, "docs/maintainers.md no longer says how long a module may be"
    lengths = {p.relative_to(REPO).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
               for p in (REPO / "autograder").rglob("*.py")}
    assert {path: n for path, n in lengths.items() if n > int(said.group(1))} == {}


def test_the_students_makefile_is_smaller_than_the_courses():
    assert {"test", "lab", "ci-grade", "clean"} <= student_targets()
    assert "bench" not in student_targets() and "bench" in course_targets()


# --- each kind of drift, planted ----------------------------------------------------------

@pytest.fixture
def planted(tmp_path):
    """A copy of docs/ beside a copy of README.md, for pages with one planted mistake."""
    import shutil

    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    return tmp_path


def test_a_link_to_a_missing_file_is_reported(planted):
    page = planted / "docs" / "grading.md"
    text = page.read_text() + "\nSee [the old page](instructors/moodle.md).\n"
    assert link_problems(text, page, root=planted) == ["link to instructors/moodle.md: no file instructors/moodle.md"]


def test_a_link_to_a_missing_anchor_is_reported(planted):
    page = planted / "README.md"
    text = page.read_text() + "\nSee [limits](docs/grading.md#time-limits-per-stage).\n"
    problems = link_problems(text, page, root=planted)
    assert problems == ["link to docs/grading.md#time-limits-per-stage: docs/grading.md has no heading "
                        "#time-limits-per-stage"]


def test_a_link_outside_the_repository_is_reported(planted):
    page = planted / "README.md"
    (planted.parent / "COURSE_CONTRACT.md").write_text("# contract\n")
    problems = link_problems(page.read_text() + "\n[contract](../COURSE_CONTRACT.md)\n", page, root=planted)
    assert problems == ["link to ../COURSE_CONTRACT.md: outside the repository (a dead link in every clone)"]


def test_a_students_page_links_only_what_the_students_repository_holds():
    text = TEMPLATE.read_text() + "\nSee [the grading page](docs/grading.md).\n"
    assert link_problems(text, TEMPLATE, student_repo=True) == [
        "link to docs/grading.md: the students' repository has no docs/grading.md"]


def test_a_made_up_target_is_reported(planted):
    text = (planted / "docs" / "maintainers.md").read_text() + "\n```bash\nmake frobnicate JOBS=2\n```\n"
    assert target_problems(text, course_targets()) == ["`make frobnicate`: no such target"]


def test_an_instructors_target_on_a_students_page_is_reported():
    text = (REPO / "docs" / "students.md").read_text() + "\nTime your classes with `make bench`.\n"
    assert target_problems(text, student_targets()) == ["`make bench`: no such target"]
    assert target_problems(text, course_targets()) == []


def test_a_made_up_option_is_reported():
    text = "```bash\npython -m autograder NOTEBOOK --stage 4 --fast\nch03-grade NB --colour\n```\n"
    assert option_problems(text) == [
        "`ch03-grade --colour`: autograder.frontends.students.cli has no option --colour",
        "`python -m autograder --fast`: autograder.frontends.students.cli has no option --fast"]


def test_options_of_each_front_end_are_its_own():
    text = ("`python -m autograder.frontends.hosted.ci NB --junit x.xml --pass-mark 60`, "
            "`python -m autograder.frontends.hosted.gradescope build --hidden-seed 5`, "
            "`python -m autograder NB --junit x.xml`, `python -m autograder.frontends.nowhere --x`")
    assert option_problems(text) == ["`python -m autograder --junit`: autograder.frontends.students.cli has no option --junit",
                                     "`python -m autograder.frontends.nowhere`: no such module"]


def test_a_changed_number_is_reported(planted):
    page = planted / "docs" / "maintainers.md"
    real = len(list((REPO / "tests" / "catalog" / "mistakes").glob("*.py")))
    text = page.read_text().replace(f"{real} catalogued mistakes", "66 catalogued mistakes")
    problems = fact_problems(text)
    assert len(problems) == 1 and f"catalogued mistakes quoted as 66, the code has {real}" in problems[0]


def test_a_changed_stage_total_is_reported(planted):
    from autograder.chapters import load

    chapter = load()
    points = chapter.points(chapter.stage("causal"))  # the course's, whatever the instructor gave it
    readme = (planted / "README.md").read_text()
    text = readme.replace(f"| `CausalAttention` | {points:g} |", f"| `CausalAttention` | {points + 5:g} |")
    assert text != readme, "README's points table has no row for stage 4"
    assert [p.split(": ", 1)[1] for p in fact_problems(text)] == [f"points per stage quoted as {points + 5:g}, the code has {points:g}"]


def test_a_changed_limit_is_reported():
    text = "| time | 60 s per cell, 90 s per stage, 480 s per grading | |\n"
    assert [p.split(": ", 1)[1] for p in fact_problems(text)] == ["seconds per stage quoted as 90, the code has 60"]


def test_slugs_follow_github():
    assert slug("The call policy: what each stage accepts") == "the-call-policy-what-each-stage-accepts"
    assert slug("`results.json`") == "resultsjson"
    assert slug("macOS, Windows and containers") == "macos-windows-and-containers"
    assert slug("Without `make` (Windows, or any shell)") == "without-make-windows-or-any-shell"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_a_quoted_path_that_moved_is_reported(planted):
    text = (planted / "docs" / "maintainers.md").read_text() + "\nThe catalog test is `tests/test_catalog.py`.\n"
    assert path_problems(text) == ["`tests/test_catalog.py`: no such file or folder"]


def test_every_instructor_page_and_the_readme_link_the_customizing_recipes():
    """An instructor finds how to change points, stages and dates from whichever route page they read."""
    pages = [p for p in (REPO / "docs" / "instructors").glob("*.md") if p.name != "customize.md"]
    assert pages
    missing = [p.name for p in pages if "](customize.md)" not in p.read_text(encoding="utf-8")]
    assert missing == []
    assert "](docs/instructors/customize.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_package_map_names_every_front_end_folder_and_module():
    """frontends/__init__.py's map and docs/maintainers.md's layer table name each folder of front
    ends and each shared module, so a reader finds a file where the map says."""
    frontends = REPO / "autograder" / "frontends"
    folders = [p.name for p in frontends.iterdir() if (p / "__init__.py").is_file()]
    modules = [p.stem for p in frontends.glob("*.py") if p.stem != "__init__"]
    package_map = (frontends / "__init__.py").read_text(encoding="utf-8")
    layers = (REPO / "docs" / "maintainers.md").read_text(encoding="utf-8")
    for name in folders + modules:
        assert f":mod:`.{name}`" in package_map, name
    for name in folders:
        assert f"`{name}/`" in layers, name
    for name in modules:
        assert f"`{name}.py`" in layers, name
