"""Issue 15: make formgrader serves nbgrader's formgrader, as root and as a user.

A temporary course (this repository's Makefile, config and sources) after make release; the
real make formgrader on a free port with a known token; GET / (the URL it prints) must end,
through the redirects, on formgrader's page (200) with no exchange warning. As a user: the
same course owned by an unprivileged account, the server started by that account (no --allow-root): run as root, the
test switches to that account with runuser; run as a user, it is that account. The as-root
case is skipped, with its reason, only where the tests do not run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from support import REPO, link_venv

TOKEN = "formgrader-test-token"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """The course after make release, made once (17 s of CPU): each test serves a copy."""
    course = tmp_path_factory.mktemp("released") / "course"
    course.mkdir()
    for name in ("Makefile", "students.mk", "nbgrader_config.py", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, course)
    shutil.copytree(REPO / "solutions", course / "solutions", ignore=shutil.ignore_patterns(".*"))
    (course / ".stamp").touch()
    link_venv(course, Path(sys.executable).parent.parent)
    subprocess.run(["make", "--no-print-directory", "release", f"STAMP={course / '.stamp'}"], cwd=course,
                   check=True, capture_output=True, timeout=300,
                   env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")})
    return course


def _course(released: Path, root: Path, venv: Path) -> Path:
    course = root / "course"
    shutil.copytree(released, course, symlinks=True, ignore=shutil.ignore_patterns(".venv"))
    link_venv(course, venv)
    return course


def _serve_and_get(course: Path, env: dict, user: str | None = None) -> tuple[int, str, str]:
    port = _free_port()
    command = ["make", "--no-print-directory", "formgrader", f"STAMP={course / '.stamp'}",
               f"FORMGRADER_ARGS=--port={port} --IdentityProvider.token={TOKEN}"]
    if user:
        command = ["runuser", "--preserve-environment", "-u", user, "--", *command]  # HOME stays the test's
    server = subprocess.Popen(command, cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True)
    status, page = 0, ""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            try:
                # The server's root, as the printed URL opens it (issue 35: it opened JupyterLab);
                # the token in a header: it follows the redirects to formgrader's first page.
                request = urllib.request.Request(f"http://127.0.0.1:{port}/",
                                                 headers={"Authorization": f"token {TOKEN}"})
                with urllib.request.urlopen(request, timeout=10) as reply:
                    status, page = reply.status, reply.read().decode()
                    page = f"<!-- {reply.url} -->" + page
                # the page lists the assignments from formgrader's API, read from the course's gradebook
                request = urllib.request.Request(f"http://127.0.0.1:{port}/formgrader/api/assignments",
                                                 headers={"Authorization": f"token {TOKEN}"})
                with urllib.request.urlopen(request, timeout=30) as reply:
                    page += reply.read().decode()
                break
            except OSError:
                time.sleep(1)
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)  # the server this test started, and its children
        except ProcessLookupError:  # it had already stopped (its log says why)
            pass
        log = server.communicate(timeout=30)[0]
    return status, page, log


def _env(home: Path) -> dict:
    home.mkdir(parents=True, exist_ok=True)
    return {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "JUPYTER"))} | {
        "HOME": str(home), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}


def _check(status: int, page: str, log: str) -> None:
    assert status == 200, log[-3000:]
    assert page.startswith("<!-- http://127.0.0.1:") and "/formgrader/" in page.split("-->")[0], page[:300]
    assert "/formgrader?token=" in log, "the printed URL opens formgrader"
    assert "<h1>Manage Assignments</h1>" in page and '"name": "ch03_attention"' in page, page[-2000:]
    assert "warning-exchange" not in page, "the course uses no exchange: no exchange warning"
    assert "127.0.0.1" in log and "0.0.0.0" not in log


def test_formgrader_as_root(released, tmp_path):
    if os.geteuid() != 0:
        pytest.skip(f"not root (uid {os.geteuid()}): the server cannot be started as root here; "
                    "test_formgrader_as_a_user runs as this account")
    venv = Path(sys.executable).parent.parent
    course = _course(released, tmp_path, venv)
    status, page, log = _serve_and_get(course, _env(tmp_path / "home"))
    _check(status, page, log)
    dry = subprocess.run(["make", "-n", "-o", str(course / ".stamp"), "formgrader"], cwd=course,
                         capture_output=True, text=True).stdout
    assert "--allow-root" in dry and "--ServerApp.ip=127.0.0.1" in dry


def _user_venv(tmp_path: Path, user: str) -> Path:
    """This test's environment, for an unprivileged user: where the interpreter sits in a
    folder only root may enter (pyenv under /root), a copy of it without its own packages
    (685 MB here), with the test venv's packages on its path and the venv's `jupyter` and
    `nbgrader` commands."""
    venv = Path(sys.executable).parent.parent
    probe = subprocess.run(["runuser", "-u", user, "--", str(venv / "bin" / "python"), "-c", "import nbgrader"],
                           capture_output=True)
    if probe.returncode == 0:
        return venv
    base = tmp_path / "python"
    shutil.copytree(sys.base_prefix, base, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "test", "tests", "site-packages"))
    user_venv = tmp_path / "venv"
    subprocess.run([base / "bin" / "python3", "-m", "venv", "--without-pip", user_venv], check=True)
    site = next((user_venv / "lib").glob("python3*/site-packages"))
    # addsitedir, not a path line: the test venv's own .pth files (the editable install) count too
    packages = next((venv / "lib").glob("python3*/site-packages"))
    (site / "test-venv.pth").write_text(f"import site; site.addsitedir({str(packages)!r})\n")
    for command, module in (("jupyter", "jupyter_core.command"), ("nbgrader", "nbgrader.apps.nbgraderapp"),
                            ("jupyter-lab", "jupyterlab.labapp"),  # `jupyter lab` runs jupyter-lab
                            ("alembic", "alembic.config")):  # nbgrader runs alembic from PATH
        script = user_venv / "bin" / command
        script.write_text(f"#!{user_venv / 'bin' / 'python'}\nimport sys\nfrom {module} import main\nsys.exit(main())\n")
        script.chmod(0o755)
    return user_venv


def test_formgrader_as_a_user(released, request, tmp_path):
    if os.geteuid() != 0:
        # Not root: this account is the unprivileged user, and it runs this test's interpreter.
        venv = Path(sys.executable).parent.parent
        course = _course(released, tmp_path, venv)
        status, page, log = _serve_and_get(course, _env(tmp_path / "home"))
        _check(status, page, log)
        dry = subprocess.run(["make", "-n", "formgrader", f"STAMP={course / '.stamp'}"], cwd=course,
                             capture_output=True, text=True).stdout
        assert "--allow-root" not in dry and "--ServerApp.ip=127.0.0.1" in dry, dry
        return
    if not shutil.which("runuser"):
        reason = "root without runuser (util-linux): cannot start the server as another account"
        if os.environ.get("CI"):
            pytest.fail(reason + "; install util-linux on the CI runner")
        pytest.skip(reason)
    user = "nobody"
    # pytest's own temporary folders are root's alone: a folder the user can reach
    tmp_path = Path(tempfile.mkdtemp(prefix="formgrader-user-"))
    tmp_path.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(tmp_path, ignore_errors=True))
    venv = _user_venv(tmp_path, user)
    course = _course(released, tmp_path, venv)
    uid, gid = pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid
    home = tmp_path / "home"
    home.mkdir()
    for path in [course, home, *course.rglob("*"), *home.rglob("*")]:
        if not path.is_symlink():  # course/.venv: the venv stays root's
            os.chown(path, uid, gid)
    env = _env(home)
    if venv != Path(sys.executable).parent.parent:  # the copied interpreter loads its own libpython
        env["LD_LIBRARY_PATH"] = str(tmp_path / "python" / "lib")
        # the server extensions (formgrader) are enabled in the test venv's etc/jupyter, and
        # their templates (nbconvert's 'classic') are in its share/jupyter
        test_venv = Path(sys.executable).parent.parent
        env["JUPYTER_CONFIG_PATH"] = str(test_venv / "etc" / "jupyter")
        env["JUPYTER_PATH"] = str(test_venv / "share" / "jupyter")
    status, page, log = _serve_and_get(course, env, user=user)
    _check(status, page, log)
    dry = subprocess.run(["runuser", "-u", user, "--", "make", "-n", "formgrader",
                          f"STAMP={course / '.stamp'}"], cwd=course, capture_output=True, text=True).stdout
    assert "--allow-root" not in dry and "--ServerApp.ip=127.0.0.1" in dry, dry
