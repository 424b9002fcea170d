"""Screenshots of what a student sees, taken with headless Chromium (Debian: apt-get install chromium).

    .venv/bin/python tests/screenshots.py [--out build/screenshots]

1. feedback.png: the HTML feedback of a failing stage (stage 4 without the 1/sqrt(d_k) scale),
   as the notebook's test cell renders it: the table, the hints, the heatmap.
2. jupyterlab.png: JupyterLab (started as `make lab` starts it) with an executed notebook
   whose stage 4 test cell fails.

With --instructor, what an instructor sees instead, from a generated class of seven (full
marks, blank, stages 1-4, each of three mistakes, a broken cell) autograded by `make autograde`'s code:

3. formgrader_gradebook.png: nbgrader's formgrader (as `make formgrader` serves it), the
   notebook's gradebook with each student's score.
4. nbgrader_feedback.png: `make feedback`'s HTML for the student with the stage-3 mistake, at
   the failing stage's test cell.
5. class_report.png: the class report that `make autograde` wrote (`make class-report`), its
   whole page: the mistakes ranked, the histograms per stage, errors, the students not graded.

Without a Chromium binary it prints why and exits 0 (tests/e2e/test_student_experience.py skips).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from support import REPO  # tests/ is sys.path[0] when this file runs as a script

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

STUDENT_CELL = '''import torch
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
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)  # forgot: / keys.shape[-1] ** 0.5
        scores = scores.masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        return self.dropout(torch.softmax(scores, dim=-1)) @ self.W_value(x)
'''
TEST_CELL = 'from autograder import grade_stage\ngrade_stage("ch03_attention", 4, globals())'


def find_browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def shoot(browser: str, url: str, png: Path, size: str, wait_ms: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--window-size={size}", f"--virtual-time-budget={wait_ms}",
                        f"--screenshot={png}", url],
                       check=True, capture_output=True, timeout=180)


def feedback_page(out: Path) -> Path:
    import torch  # noqa: F401  (the student's cell imports it)

    from autograder.chapters import load
    from autograder.frontends.reports.html import stage_html
    from autograder.frontends.students import notebook

    namespace: dict = {}
    exec(STUDENT_CELL, namespace)
    chapter = load("ch03_attention")
    result = notebook._run(chapter, chapter.stage(4), namespace, "cpu", None)
    page = out / "feedback.html"
    page.write_text("<!doctype html><meta charset='utf-8'><body style='margin:16px'>"
                    + stage_html(result, notebook.failing_exhibit(chapter, result, namespace, "cpu")) + "</body>")
    return page


def executed_notebook(out: Path) -> Path:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Stage 4 (causal), a student's attempt"),
                nbformat.v4.new_code_cell(STUDENT_CELL), nbformat.v4.new_code_cell(TEST_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    path = out / "failing_stage4.ipynb"
    nbformat.write(nb, path)
    return path


def lab_screenshot(browser: str, notebook: Path, png: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [str(REPO / ".venv" / "bin" / "jupyter"), "lab", f"--ServerApp.root_dir={REPO}", "--no-browser",
               f"--port={port}", "--IdentityProvider.token=", "--ServerApp.disable_check_xsrf=True"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home}
        lab = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2).close()
                    break
                except OSError:
                    time.sleep(0.5)
            relative = notebook.relative_to(REPO).as_posix()
            shoot(browser, f"http://127.0.0.1:{port}/lab/tree/{relative}", png, "1400,1500", 25000)
        finally:
            os.killpg(lab.pid, 15)
            lab.wait(timeout=30)


FROM_STAGE_3 = """<script>
const graded = document.getElementsByName("test_stage3_self_attention")[0].closest(".cell");
for (let el = graded.previousElementSibling.previousElementSibling; el; el = el.previousElementSibling) {
  if (el.classList.contains("cell")) el.style.display = "none";
}
</script>
"""


def _serve(command: list[str], cwd: Path, env: dict, probe: str) -> subprocess.Popen:
    """A Jupyter server started in its own session, once ``probe`` answers (or 60 s passed)."""
    server = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(probe, timeout=2).close()
            break
        except OSError:
            time.sleep(0.5)
    return server


def instructor_screenshots(browser: str, out: Path) -> list[Path]:
    from tools import simulated_course

    course = out / "course"
    if course.exists():
        raise SystemExit(f"{course} exists: give another --out (this never replaces a course)")
    chosen = simulated_course.class_of(7)
    simulated_course.new_course(course, chosen)
    env = simulated_course.nbgrader_env()
    subprocess.run([sys.executable, "-I", "-m", "autograder", "autograde", "ch03_attention"],
                   cwd=course, env=env, check=True, capture_output=True)
    simulated_course.nbgrader(course, "generate_feedback", "ch03_attention", "--force")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bin_dir = Path(sys.executable).parent
    command = [str(bin_dir / "jupyter"), "lab", f"--ServerApp.root_dir={course}", "--no-browser", f"--port={port}",
               "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.default_url=/formgrader",
               *(["--allow-root"] if os.geteuid() == 0 else [])]
    gradebook = out / "formgrader_gradebook.png"
    with tempfile.TemporaryDirectory() as home:
        server = _serve(command, course, {**env, "HOME": home}, f"http://127.0.0.1:{port}/api/status")
        try:
            shoot(browser, f"http://127.0.0.1:{port}/formgrader/gradebook/ch03_attention/ch03_attention", gradebook,
                  "1300,700", 15000)
        finally:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)
    student = next(name for name in chosen if name.endswith("mistake3"))
    feedback = next((course / "grading" / "feedback" / student / "ch03_attention").glob("*.html"))
    page = out / "nbgrader_feedback.png"
    # The failing stage's test cell under the page's score table: a copy of the page whose
    # earlier cells are hidden (a headless screenshot starts at the top, whatever the anchor).
    excerpt = out / "nbgrader_feedback_stage3.html"
    excerpt.write_text(feedback.read_text(encoding="utf-8") + FROM_STAGE_3, encoding="utf-8")
    shoot(browser, excerpt.as_uri(), page, "1100,1400", 3000)
    report = out / "class_report.png"
    shoot(browser, (course / "build" / "class-report" / "index.html").as_uri(), report, "1200,2600", 2000)
    return [gradebook, page, report]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Screenshots of the feedback HTML and of JupyterLab with a failing "
                                                 "test cell, taken with headless Chromium (apt-get install chromium).")
    parser.add_argument("--out", default=str(REPO / "build" / "screenshots"), help="folder for the PNGs")
    parser.add_argument("--instructor", action="store_true",
                        help="formgrader's gradebook, nbgrader's feedback and the class report for a generated class instead")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print("skipped: no Chromium browser found (Debian: apt-get install chromium)")
        return 0
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.instructor:
        for png in instructor_screenshots(browser, out):
            print(png)
        return 0
    shoot(browser, feedback_page(out).as_uri(), out / "feedback.png", "1000,1700", 2000)
    print(out / "feedback.png")
    notebook = executed_notebook(out)
    try:
        notebook.relative_to(REPO)
    except ValueError:
        print("jupyterlab.png skipped: --out must lie inside the repository, which JupyterLab serves")
        return 0
    lab_screenshot(browser, notebook, out / "jupyterlab.png")
    print(out / "jupyterlab.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
