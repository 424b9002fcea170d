"""The maintainers' workflows do on each kind of repository what the docs say: check.yml and
platforms.yml under each setting of the repository variables AUTOGRADER_CI and
AUTOGRADER_PLATFORMS (docs/maintainers.md, "CI"; docs/instructors/customize.md, "Your course
repository's CI").

The workflows decide with GitHub expressions in their ``if:`` and ``matrix:``; :func:`evaluate`
evaluates the part of the language they use (``==``, ``!=``, ``!``, ``&&``, ``||``,
parentheses, string literals, ``fromJSON`` and context properties) by GitHub's rules: a
property that is not there is ``''``, strings compare ignoring case, ``&&`` and ``||`` return
one of their operands. Each row of the docs' tables is then played through the workflows.
(actionlint, in tests/e2e/test_ci.py, checks the workflows' syntax; tests/e2e/test_ci.py also
checks that every entry of make check-course's selection selects a test.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with the instructor install (nbgrader's jupyter_events)")

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
# The pages that say what each setting runs, each with both tables.
PAGES = [REPO / "docs" / "maintainers.md", REPO / "docs" / "instructors" / "customize.md"]
# GitHub's minute multipliers for its standard runners on a private repository
# (docs.github.com, "Minute multipliers"; public repositories pay nothing).
MULTIPLIER = {"ubuntu": 1, "windows": 2, "macos": 10}


# --- GitHub expressions -----------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\)|,)|(?P<name>[A-Za-z_][\w.-]*))")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"cannot read the expression {text!r} at {text[pos:]!r}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


def _truthy(value) -> bool:
    return value not in ("", None, False, 0)


def _equal(a, b) -> bool:
    a, b = ("" if a is None else a), ("" if b is None else b)
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return a == b


def evaluate(expression: str, context: dict[str, object]):
    """``expression`` (with or without ``${{ }}``) evaluated with ``context``'s dotted names."""
    expression = re.sub(r"^\$\{\{(.*)\}\}$", r"\1", expression.strip(), flags=re.S)
    tokens = _tokens(expression)
    pos = 0

    def peek():
        return tokens[pos][1] if pos < len(tokens) else None

    def take(expected=None):
        nonlocal pos
        kind, value = tokens[pos]
        if expected is not None and value != expected:
            raise ValueError(f"expected {expected!r}, found {value!r} in {expression!r}")
        pos += 1
        return kind, value

    def either():
        value = both()
        while peek() == "||":
            take()
            right = both()
            value = value if _truthy(value) else right
        return value

    def both():
        value = comparison()
        while peek() == "&&":
            take()
            right = comparison()
            value = right if _truthy(value) else value
        return value

    def comparison():
        value = unary()
        if peek() in ("==", "!="):
            _, op = take()
            right = unary()
            value = _equal(value, right) == (op == "==")
        return value

    def unary():
        if peek() == "!":
            take()
            return not _truthy(unary())
        return primary()

    def primary():
        kind, value = take()
        if kind == "str":
            return value[1:-1].replace("''", "'")
        if value == "(":
            inner = either()
            take(")")
            return inner
        if kind == "name" and peek() == "(":
            take("(")
            args = [either()]
            while peek() == ",":
                take()
                args.append(either())
            take(")")
            if value.lower() == "fromjson":
                return json.loads(args[0])
            raise ValueError(f"no function {value} here")
        if kind == "name":
            return {"true": True, "false": False, "null": None}.get(value, context.get(value, ""))
        raise ValueError(f"unexpected {value!r} in {expression!r}")

    value = either()
    if pos != len(tokens):
        raise ValueError(f"left over in {expression!r}: {tokens[pos:]}")
    return value


def test_the_evaluator_follows_github():
    ctx = {"vars.A": "full", "github.event_name": "push"}
    assert evaluate("vars.A == 'FULL'", ctx) is True  # strings compare ignoring case
    assert evaluate("vars.MISSING == ''", ctx) is True and evaluate("!vars.MISSING", ctx) is True
    assert evaluate("vars.A != 'off' || github.event_name == 'workflow_dispatch'", ctx) is True
    assert evaluate("${{ fromJSON(vars.A == 'linux' && '[\"u\"]' || '[\"u\", \"m\"]') }}", ctx) == ["u", "m"]
    assert evaluate("fromJSON(vars.A == 'full' && '[\"u\"]' || '[\"u\", \"m\"]')", ctx) == ["u"]
    assert evaluate("(!vars.B && vars.A == 'full') && 'x'", ctx) == "x"
    assert evaluate("'it''s'", ctx) == "it's"
    with pytest.raises(ValueError):
        evaluate("vars.A === 'full'", ctx)


# --- the workflows, played --------------------------------------------------------------

def workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def _context(variables: dict[str, str], event: str) -> dict[str, object]:
    return {"github.event_name": event, **{f"vars.{k}": v for k, v in variables.items()}}


def _condition(holder: dict, context: dict) -> bool:
    return _truthy(evaluate(str(holder["if"]), context)) if "if" in holder else True


def check_runs(variables: dict[str, str], event: str = "push", course: bool = True) -> list[str]:
    """The make commands check.yml's job runs: none when the job does not run."""
    job = workflow("check.yml")["jobs"]["check"]
    context = _context(variables, event)
    if not _condition(job, context):
        return []
    context["steps.repo.outputs.course"] = "true" if course else ""
    return [step["run"].strip() for step in job["steps"]
            if str(step.get("run", "")).startswith("make ") and _condition(step, context)]


def platform_jobs(variables: dict[str, str], event: str = "push") -> list[tuple[str, str]]:
    """The (os, torch) jobs platforms.yml's matrix makes: none when the job does not run."""
    job = workflow("platforms.yml")["jobs"]["grade"]
    context = _context(variables, event)
    if not _condition(job, context):
        return []
    matrix = job["strategy"]["matrix"]
    axes = {}
    for axis in ("os", "torch"):
        value = matrix[axis]
        axes[axis] = evaluate(value, context) if isinstance(value, str) else [str(v) for v in value]
    jobs = [(os, torch) for os in axes["os"] for torch in axes["torch"]]
    jobs += [(extra["os"], str(extra["torch"])) for extra in matrix.get("include", [])
             if (extra["os"], str(extra["torch"])) not in jobs]
    return jobs


def billed_per_minute(jobs: list[tuple[str, str]]) -> int:
    """Minutes billed on a private repository for each minute every job runs."""
    return sum(MULTIPLIER[os.split("-")[0]] for os, _ in jobs)


def test_the_workflows_run_on_pushes_pull_requests_and_by_hand():
    for name in ("check.yml", "platforms.yml"):
        assert set(workflow(name)["on"]) == {"push", "pull_request", "workflow_dispatch"}, name


def test_this_projects_repository_runs_everything_and_a_course_repository_the_course_check():
    assert check_runs({"AUTOGRADER_CI": "full"}) == ["make check", "make check-slow"]
    assert len(platform_jobs({"AUTOGRADER_CI": "full"})) == 10
    for course in ({}, {"AUTOGRADER_CI": "course"}, {"AUTOGRADER_CI": "Course"}, {"AUTOGRADER_CI": "yes"}):
        assert check_runs(course) == ["make check-course"], course
        assert platform_jobs(course) == [], course
    assert check_runs({"AUTOGRADER_CI": "off"}) == [] and platform_jobs({"AUTOGRADER_CI": "off"}) == []
    assert check_runs({"AUTOGRADER_CI": "full"}, event="pull_request") == ["make check", "make check-slow"]


def test_run_workflow_by_hand_runs_whatever_the_variables_say():
    assert check_runs({"AUTOGRADER_CI": "off"}, event="workflow_dispatch") == ["make check-course"]
    assert len(platform_jobs({}, event="workflow_dispatch")) == 10
    assert len(platform_jobs({"AUTOGRADER_PLATFORMS": "off"}, event="workflow_dispatch")) == 10
    assert {os for os, _ in platform_jobs({"AUTOGRADER_PLATFORMS": "linux"}, event="workflow_dispatch")} == {"ubuntu-latest"}


def test_the_platforms_variable_overrides_the_default():
    assert platform_jobs({"AUTOGRADER_CI": "full", "AUTOGRADER_PLATFORMS": "off"}) == []
    assert len(platform_jobs({"AUTOGRADER_PLATFORMS": "all"})) == 10
    linux = platform_jobs({"AUTOGRADER_PLATFORMS": "linux"})
    assert {os for os, _ in linux} == {"ubuntu-latest"} and len(linux) == 4
    assert check_runs({"AUTOGRADER_PLATFORMS": "all"}) == ["make check-course"], "the platforms leave check.yml alone"


def test_a_student_repository_runs_no_check():
    """No solutions/ (a student repository made from this one): the job runs, checks nothing."""
    for variables in ({}, {"AUTOGRADER_CI": "full"}, {"AUTOGRADER_CI": "course"}):
        assert check_runs(variables, course=False) == []


def test_the_paths_the_workflows_run_exist():
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for quoted in re.findall(r"(?<![\w/.-])((?:tests|solutions|assignments|autograder)/[\w./-]*\w)", path.read_text()):
            assert (REPO / quoted).exists(), f"{path.name} runs {quoted}, which is not there"


# --- the docs' tables -------------------------------------------------------------------

def table(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose first header cell is ``header``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == header:
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return rows
    raise AssertionError(f"no table headed {header}")


def settings(cell: str, name: str) -> list[dict[str, str]]:
    """The variable settings a table's first cell names: `full`, `course`, unset."""
    found = [{name: value} for value in re.findall(r"`(\w+)`", cell)]
    if "unset" in cell:
        found.append({})
    assert found, f"no setting of {name} in {cell!r}"
    return found


def _jobs_quoted(cell: str) -> int:
    if cell.lower().startswith("nothing") or cell.lower().startswith("none"):
        return 0
    return int(re.match(r"(\d+) jobs?\b", cell).group(1))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_docs_say_what_each_ci_setting_runs(page):
    """| `AUTOGRADER_CI` | check.yml runs | platforms.yml runs |: every row is what the workflows do."""
    rows = table(page.read_text(encoding="utf-8"), "`AUTOGRADER_CI`")
    named = set()
    for cells in rows:
        for variables in settings(cells[0], "AUTOGRADER_CI"):
            named.add(variables.get("AUTOGRADER_CI", ""))
            commands = check_runs(variables)
            quoted = re.findall(r"`(make [\w-]+)`", cells[1])
            assert quoted == commands, f"{page.name}: {cells[0]} runs {commands}, the page says {cells[1]!r}"
            assert _jobs_quoted(cells[2]) == len(platform_jobs(variables)), f"{page.name}: {cells[0]}, {cells[2]!r}"
    assert named == {"full", "course", "off", ""}, f"{page.name}: a setting is missing from the table"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_docs_say_what_each_platforms_setting_runs_and_costs(page):
    """| `AUTOGRADER_PLATFORMS` | jobs | billed minutes a job-minute |: the matrix and GitHub's multipliers."""
    rows = table(page.read_text(encoding="utf-8"), "`AUTOGRADER_PLATFORMS`")
    named = set()
    for cells in rows:
        for variables in settings(cells[0], "AUTOGRADER_PLATFORMS"):
            if not variables:
                continue  # unset: the AUTOGRADER_CI table's last column
            named.add(variables["AUTOGRADER_PLATFORMS"])
            jobs = platform_jobs(variables)
            assert _jobs_quoted(cells[1]) == len(jobs), f"{page.name}: {cells[0]} makes {len(jobs)} jobs, not {cells[1]!r}"
            for os in ("ubuntu", "windows", "macos"):
                count = re.search(rf"{os} (\d+)", cells[1], re.I)
                assert int(count.group(1) if count else 0) == sum(j.startswith(os) for j, _ in jobs), (page.name, cells)
            billed = re.match(r"(\d+)", cells[2])
            assert billed and int(billed.group(1)) == billed_per_minute(jobs), f"{page.name}: {cells!r}"
    assert named == {"all", "linux", "off"}, f"{page.name}: a setting is missing from the table"


def test_the_check_course_minutes_are_quoted_alike():
    """The measured time of make check-course is one figure wherever it is quoted."""
    quoted = {}
    for page in [*PAGES, WORKFLOWS / "check.yml", REPO / "README.md"]:
        for match in re.finditer(r"check-course`?[^.\n|]*?about (\d+) minutes", page.read_text(encoding="utf-8")):
            quoted.setdefault(match.group(1), []).append(page.name)
    assert len(quoted) == 1, f"make check-course's time is quoted differently: {quoted}"
