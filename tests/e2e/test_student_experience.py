"""What a student sees: make test's ending, make lab, and the notebook's test-cell feedback."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest
import torch
from support import REPO, makefile_text
from torch import nn

from autograder.chapters import load
from autograder.frontends.reports.html import attention_heatmap_png, escape, stage_html
from autograder.frontends.reports.text import format_points, stage_text
from autograder.frontends.students import notebook

CHAPTER = load("ch03_attention")
# Stages' points as the course gives them (an instructor's edit changes them): "10/10" for stage 1 here.
S1, S2, S5 = (format_points(CHAPTER.points(CHAPTER.stage(n))) for n in (1, 2, 5))
S1_FULL = f"{S1}/{S1}"


UNSCALED_SOURCE = '''
import torch
from torch import nn

class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        n = x.shape[1]
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        return self.dropout(torch.softmax(scores, dim=-1)) @ self.W_value(x)
'''

# The book's CausalAttention without the 1/sqrt(d_k) scale (a catalogued mistake), as a class
# for the in-kernel tests and as the source a notebook cell holds.
_unscaled: dict = {}
exec(UNSCALED_SOURCE, _unscaled)
UnscaledCausalAttention = _unscaled["CausalAttention"]
STAGE4_UNSCALED = {"CausalAttention": UnscaledCausalAttention, "torch": torch, "nn": nn}


@pytest.fixture(scope="module")
def unscaled_stage4():
    return notebook._run(CHAPTER, CHAPTER.stage(4), dict(STAGE4_UNSCALED), "cpu", None)


# -- the feedback itself ---------------------------------------------------------------------

def test_feedback_html_has_the_table_each_hint_once_and_a_heatmap(unscaled_stage4):
    result = unscaled_stage4
    assert 0 < result.score < result.max_score
    html = stage_html(result, notebook.failing_exhibit(CHAPTER, result, dict(STAGE4_UNSCALED), "cpu"))
    assert html.count("<table") == 1
    for c in result.checks:
        assert f"<code>{c.check.id}</code>" in html
        assert f"{format_points(c.score)}/{format_points(c.check.points)}" in html
    assert "✓ passed" in html and "✗ failed" in html
    unscaled_hint = "the scores are not scaled: divide them by sqrt(d_k) before the softmax"
    failed_with_it = [c for c in result.checks if c.hint == unscaled_hint]
    assert len(failed_with_it) >= 2  # several checks name the same mistake...
    assert html.count(escape(unscaled_hint)) == 1  # ...the reader sees it once
    assert stage_text(result).count(unscaled_hint) == 1
    assert "smallest failing example:" in html and "num_tokens=" in html
    assert re.search(r'<img alt="attention weights[^"]*" src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', html)


def test_the_heatmap_shows_the_students_weights_read_off_the_output(unscaled_stage4):
    exhibit = notebook.failing_exhibit(CHAPTER, unscaled_stage4, dict(STAGE4_UNSCALED), "cpu")
    assert exhibit is not None and exhibit.student is not None
    t = exhibit.expected.shape[-1]
    # the student's weights are the unscaled softmax: causal, rows summing to 1, and not the expected ones
    for weights in (exhibit.expected, exhibit.student):
        assert torch.allclose(weights.sum(-1), torch.ones(t, dtype=weights.dtype))
        assert not weights.triu(1).any()
    assert not torch.allclose(exhibit.student, exhibit.expected)
    assert "no scale" in exhibit.reading
    png = attention_heatmap_png(exhibit)
    assert png.startswith(b"\x89PNG")


def test_unknown_mistakes_show_only_the_expected_weights():
    class Halved(UnscaledCausalAttention):
        def forward(self, x):
            return super().forward(x) * 0.5

    namespace = {"CausalAttention": Halved}
    result = notebook._run(CHAPTER, CHAPTER.stage(4), namespace, "cpu", None)
    exhibit = notebook.failing_exhibit(CHAPTER, result, namespace, "cpu")
    assert exhibit is not None and exhibit.student is None and "matches no computation" in exhibit.reading
    html = stage_html(result, exhibit)
    assert "data:image/png;base64," in html and "matches no computation" in html


def test_no_stray_echo_in_a_kernel_but_the_points_stay_a_number(capsys, monkeypatch):
    right = {"softmax_naive": lambda x: torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)}
    points = notebook.grade_stage(CHAPTER.id, 1, right)
    assert points == CHAPTER.points(CHAPTER.stage(1)) and isinstance(points, float)
    assert hasattr(points, "_ipython_display_") and points._ipython_display_() is None
    assert f"Stage 1 (softmax): {S1_FULL} points" in capsys.readouterr().out  # outside a kernel: the text
    # nbgrader validate reads the cell's partial credit from its echo: there it stays a plain number
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    plain = notebook.grade_stage(CHAPTER.id, 1, right)
    assert plain == CHAPTER.points(CHAPTER.stage(1)) and not isinstance(plain, notebook.StagePoints)


def test_an_executed_notebooks_failing_test_cell_has_html_with_a_heatmap_and_plain_text(tmp_path):
    """In a real kernel the test cell's output is one display: text/html (table, heatmap) and
    a text/plain fallback; no `4.0` echoed after it."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(UNSCALED_SOURCE),
                nbformat.v4.new_code_cell('from autograder import grade_stage\n'
                                          'grade_stage("ch03_attention", 4, globals())')]
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = nb.cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data"], outputs
    data = outputs[0].data
    assert "<table" in data["text/html"] and "data:image/png;base64," in data["text/html"]
    assert data["text/plain"].startswith("Stage 4 (causal): ") and "points" in data["text/plain"]
    assert "✗ 4.3" in data["text/plain"]


# -- one notebook, one grade -----------------------------------------------------------------

LATE_SOURCES = [
    "import torch\n",
    "def softmax_naive(x):\n    e = torch.exp(x * SCALE)\n    return e / e.sum(-1, keepdim=True)\n",
    'from autograder import grade_stage\ngrade_stage("ch03_attention", 1, globals())\n',
    "SCALE = 1.0\n",
]


def _notebook_of(sources: list[str], path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)
    return path


def _make(*args, timeout=300):
    # -o: use the environment as it is; never reinstall it from a test
    return subprocess.run(["make", "--no-print-directory", "-o", ".venv/.student", "-o", ".venv/.installed", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


def test_make_test_and_the_test_cell_both_explain_a_late_definition(tmp_path):
    submission = _notebook_of(LATE_SOURCES, tmp_path / "late.ipynb")
    proc = _make("test", f"NOTEBOOK={submission}", "STAGE=1", "DEVICE=cpu")
    assert proc.returncode == 0 and f"Total: {S1_FULL}" in proc.stdout, proc.stdout + proc.stderr
    assert 'warning: cell "def softmax_naive(x):": `softmax_naive` uses `SCALE`' in proc.stdout
    # the test cell (cell 3) runs before cell 4: SCALE does not exist yet, and the hint says why
    namespace = {"torch": torch}
    exec(LATE_SOURCES[1], namespace)
    result = notebook._run(CHAPTER, CHAPTER.stage(1), namespace, "cpu", None)
    assert result.score == 0
    assert any("further down" in c.hint for c in result.checks), stage_text(result)


# -- make test and make lab ------------------------------------------------------------------

PARTIAL = ["import torch\n",
           "def softmax_naive(x):\n    e = torch.exp(x)\n    return e / e.sum(-1, keepdim=True)\n",
           "def compute_attn_scores(inputs):\n    raise NotImplementedError\n"]


def test_make_test_on_a_partial_notebook_prints_the_grade_and_no_make_error(tmp_path):
    submission = _notebook_of(PARTIAL, tmp_path / "partial.ipynb")
    proc = _make("test", f"NOTEBOOK={submission}", "STAGE=1 2", "DEVICE=cpu")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    partial = f"Total: {S1}/{format_points(CHAPTER.points(CHAPTER.stage(1)) + CHAPTER.points(CHAPTER.stage(2)))}"
    assert "┃ Stage" in proc.stdout and partial in proc.stdout
    assert "make: ***" not in proc.stdout + proc.stderr and "Error" not in proc.stderr
    strict = _make("test", f"NOTEBOOK={submission}", "STAGE=1 2", "DEVICE=cpu", "STRICT=1")
    assert strict.returncode != 0 and partial in strict.stdout  # the grader's status 1, for scripts


def test_make_test_v1_passes_verbose_and_strict_keeps_the_status():
    plain = _make("-n", "test").stdout
    assert "--verbose" not in plain and "|| true" in plain
    assert "--verbose" in _make("-n", "test", "V=1").stdout
    assert "|| true" not in _make("-n", "test", "STRICT=1").stdout


def test_two_installs_students_get_no_instructor_tools():
    # the installed package's metadata: each requirement with the extra that brings it
    extras: dict[str, list[str]] = {}
    for requirement in importlib.metadata.requires("ch03-attention-autograder"):
        name, _, marker = requirement.partition(";")
        found = re.search(r"extra == \"(\w+)\"", marker)
        if found:
            extras.setdefault(found.group(1), []).append(name.strip())

    def expanded(extra: str) -> str:  # an extra with the project's own extras in it ("...[notebook]")
        own = re.findall(r"ch03-attention-autograder\[([a-z,]+)\]", " ".join(extras[extra]))
        return " ".join(extras[extra] + [expanded(e) for names in own for e in names.split(",")]).lower()

    student = expanded("student")
    for needed in ("jupyterlab", "matplotlib", "ipykernel"):
        assert needed in student
    for tool in ("nbgrader", "pytest", "ruff", "jsonschema", "actionlint", "shellcheck"):
        assert tool not in student
    instructor = " ".join(extras["instructor"])
    brought = re.search(r"ch03-attention-autograder\[([a-z,]+)\]", instructor)
    assert brought and {"student", "dev"} <= set(brought.group(1).split(",")) and "nbgrader" in instructor
    makefile = makefile_text()
    for target in ("test", "lab", "ci-grade"):
        assert re.search(rf"^{target}: \$\(STUDENT_STAMP\)$", makefile, re.MULTILINE), target
    for target in ("check-fast", "release", "lint", "gradescope"):
        assert re.search(rf"^{target}: \$\(STAMP\)$", makefile, re.MULTILINE), target


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_lab_serves_the_repository_root_without_error_lines(tmp_path):
    """As root here (CI, Docker) --allow-root is passed; as a user it is not (make -n)."""
    if not (REPO / ".venv" / "bin" / "jupyter-lab").exists():
        pytest.skip("JupyterLab is not installed in .venv")
    port = _free_port()
    log = tmp_path / "lab.log"
    env = {**os.environ, "HOME": str(tmp_path), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    with open(log, "w") as out:
        proc = subprocess.Popen(["make", "--no-print-directory", "-o", ".venv/.student", "lab",
                                 f"LAB_ARGS=--no-browser --port {port} --IdentityProvider.token="],
                                cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        status, deadline = None, time.monotonic() + 90
        while status is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/", timeout=2) as response:
                    status, listing = response.status, json.load(response)
            except OSError:
                time.sleep(0.5)
        text = log.read_text()
        assert status == 200, text
        assert {"Makefile", "assignments"} <= {item["name"] for item in listing["content"]}  # the root, not assignments/
        assert not re.search(r"^\[E ", text, re.MULTILINE), text
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
    as_user = subprocess.run(["make", "--no-print-directory", "-n", "-o", ".venv/.student", "lab"], cwd=REPO,
                             capture_output=True, text=True).stdout
    recipe = "\n".join(line for line in as_user.splitlines() if not line.startswith("make"))  # make's own notes
    words = shlex.split(recipe.replace("\\\n", " "))  # the recipe as the shell reads it
    assert f"--ServerApp.root_dir={REPO}" in words and "assignments/ch03_attention/ch03_attention.ipynb" in as_user
    assert ("--allow-root" in as_user) == (os.geteuid() == 0)


def test_the_screenshot_script_is_runnable():
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "screenshots.py"), "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "chromium" in proc.stdout.lower() and "--instructor" in proc.stdout


# -- a test cell that behaves like a cell: a time limit, and an Interrupt that stops it ---------

LOOPING_WRAPPER = (REPO / "tests" / "catalog" / "correct" / "book_style.py").read_text() + '''

class MultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        while True:  # the student's endless loop
            pass
'''


def test_the_test_cell_has_make_tests_time_limit_by_default():
    import inspect

    from autograder.core.submission import StageClock
    from autograder.sandbox.settings import Limits

    assert inspect.signature(notebook.grade_stage).parameters["stage_seconds"].default is None
    seen = []
    original = StageClock.__init__

    def spy(self, seconds):
        seen.append(seconds)
        original(self, seconds)

    try:
        StageClock.__init__ = spy
        namespace = {}
        exec("import torch\ndef softmax_naive(x):\n    return torch.softmax(x, -1)\n", namespace)
        notebook._run(CHAPTER, CHAPTER.stage(1), namespace, "cpu", None)
    finally:
        StageClock.__init__ = original
    assert seen == [Limits().stage_seconds]


def test_in_a_kernel_an_endless_loop_costs_its_stage_and_an_interrupt_stops_the_checks_at_once():
    """Stage 5's forward loops forever: the test cell returns within the stage's limit plus a few
    seconds, every check of the stage stopped; then, with a long limit, one kernel interrupt ends
    the running checks at once with one line, and the kernel goes on (stage 1 still grades)."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(REPO))

    def run(code: str, timeout: float, interrupt_after: float | None = None) -> tuple[str, float]:
        started = time.monotonic()
        msg_id = kc.execute(code)
        texts, interrupted = [], False
        while True:
            if interrupt_after is not None and not interrupted and time.monotonic() - started > interrupt_after:
                km.interrupt_kernel()
                interrupted = True
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except Exception:  # no message this second
                assert time.monotonic() - started < timeout, f"no end after {timeout} s: {''.join(texts)}"
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            content = msg["content"]
            texts.append(content.get("text", "") + content.get("data", {}).get("text/plain", "") +
                         " ".join(content.get("traceback", [])))
            if msg["msg_type"] == "status" and content["execution_state"] == "idle":
                return "".join(texts), time.monotonic() - started

    try:
        run(LOOPING_WRAPPER + "\nfrom autograder import grade_stage\n", 120)
        limit = 5
        text, seconds = run(f'grade_stage("ch03_attention", 5, globals(), stage_seconds={limit})', 120)
        assert seconds < limit + 5, (seconds, text)
        assert f"stopped after {limit} s, the time limit of a stage" in text and f"0/{S5}" in text, text
        assert "KeyboardInterrupt" not in text, text

        text, seconds = run('grade_stage("ch03_attention", 5, globals(), stage_seconds=300)', 60,
                            interrupt_after=4)
        assert seconds < 4 + 5, (seconds, text)
        assert notebook.INTERRUPTED in text and "Traceback" not in text, text
        text, _ = run('grade_stage("ch03_attention", 1, globals())', 120)
        assert S1_FULL in text, text
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# -- the notebook under another name, and an edited test cell ---------------------------------

def test_make_test_grades_a_renamed_notebook_or_names_the_candidates(tmp_path):
    renamed = _notebook_of(PARTIAL, tmp_path / "Copy of ch03_attention (1).ipynb")
    expected = tmp_path / "ch03_attention.ipynb"
    proc = _make("test", f"NOTEBOOK={expected}", "STAGE=1", "DEVICE=cpu")
    assert f"Total: {S1_FULL}" in proc.stdout, proc.stdout + proc.stderr
    assert f"graded the notebook there, {renamed.name}" in proc.stdout
    _notebook_of(PARTIAL, tmp_path / "mine.ipynb")
    proc = _make("test", f"NOTEBOOK={expected}", "STAGE=1", "DEVICE=cpu")
    assert "2 other notebooks" in proc.stdout and f"Total: 0/{S1}" in proc.stdout, proc.stdout
    assert f"make test NOTEBOOK='{renamed}'" in proc.stdout and f"make test NOTEBOOK={tmp_path / 'mine.ipynb'}" in \
        proc.stdout


def test_a_finished_copy_beside_the_untouched_original_is_named(tmp_path):
    import shutil

    original = tmp_path / "ch03_attention.ipynb"
    shutil.copy(REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb", original)
    _notebook_of(PARTIAL, tmp_path / "Copy of ch03_attention.ipynb")
    for target in ("test", "ci-grade"):
        proc = _make(target, f"NOTEBOOK={original}", "STAGE=1", "DEVICE=cpu", f"CI_REPORTS={tmp_path / 'ci'}")
        assert f"0/{S1}" in proc.stdout, proc.stdout + proc.stderr
        assert '"Copy of ch03_attention.ipynb" is beside it' in proc.stdout, proc.stdout
        assert "rename that one to ch03_attention.ipynb" in proc.stdout


def test_make_test_reports_an_edited_test_cell(tmp_path):
    nb = nbformat.read(REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_stage1_softmax")
    cell.source = "print('all good')\n"
    nbformat.write(nb, tmp_path / "ch03_attention.ipynb")
    proc = _make("test", f"NOTEBOOK={tmp_path / 'ch03_attention.ipynb'}", "STAGE=1", "DEVICE=cpu")
    assert "warning: the test cell test_stage1_softmax was edited: restore the test cell" in proc.stdout, proc.stdout
    untouched = _make("test", "STAGE=1", "DEVICE=cpu")
    assert "was edited" not in untouched.stdout
