"""The class benchmark: serial ``nbgrader autograde`` against ``make autograde JOBS=n``.

    python -m autograder class-bench [--submissions 40] [--jobs N] [--keep DIR] [--no-serial-sandbox]

Builds a course of generated submissions (:mod:`autograder.frontends.maintainers.simulated_class`), times
plain nbgrader (its kernel, no sandbox: the baseline), ``make autograde`` and serial nbgrader
with this repository's configuration, and checks that the gradebooks agree.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.frontends.commands import default_jobs
from autograder.frontends.maintainers.simulated_class import ASSIGNMENT, class_of, gradebook_rows, nbgrader_env, new_course, total_scores

# Appended to the baseline course's nbgrader_config.py: nbgrader's own kernel execution, no
# sandbox, the test cells grading in the kernel as plain nbgrader would have them grade (the
# visible and the hidden examples). Under autograde a test cell defers to the sandbox and
# grades nothing (notebook.grade_stage); the kernel is told it runs under nbgrader's validate
# instead, so the baseline does the grading work it would do without this repository.
PLAIN_NBGRADER = """
from nbgrader.converters import Autograde as _Autograde
from nbgrader.preprocessors import Execute as _Execute


class _KernelGrades(_Execute):
    # nbconvert's preprocess starts the kernel through the synchronous start_new_kernel, a
    # wrapper of nbclient's own async_start_new_kernel (an override of that one is never called).
    def start_new_kernel(self, **kwargs):
        import os
        kwargs["env"] = {**os.environ, "NBGRADER_EXECUTION": "validate"}
        return super().start_new_kernel(**kwargs)


c.Autograde.autograde_preprocessors = [
    _KernelGrades if step is _Execute else step
    for step in _Autograde.class_traits()["autograde_preprocessors"].default()]
c.Execute.timeout = 60
"""


def bench(size: int, jobs: int, keep: Path | None, serial_sandbox: bool = True) -> int:
    """Times plain serial ``nbgrader autograde`` (nbgrader's kernel execution, no sandbox: the
    baseline) against ``make autograde JOBS=n`` on the same generated class; with
    ``serial_sandbox``, also serial ``nbgrader autograde`` with this repository's configuration,
    whose gradebook must equal make autograde's row for row."""
    scratch = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="autograde-bench-"))
    submissions = class_of(size)
    print(f"{size} generated submissions; {default_jobs()} CPU core(s); load average "
          f"{os.getloadavg()[0]:.1f} before", flush=True)
    new_course(scratch / "plain", submissions)
    for copy in ("parallel", *(["serial"] if serial_sandbox else [])):
        shutil.copytree(scratch / "plain", scratch / copy)
    with open(scratch / "plain" / "nbgrader_config.py", "a") as config:
        config.write(PLAIN_NBGRADER)
    nbgrader_cmd = [sys.executable, "-I", "-m", "nbgrader", "autograde", ASSIGNMENT]
    runs = {
        "plain serial `nbgrader autograde` (kernel, no sandbox)": (scratch / "plain", nbgrader_cmd),
        f"`make autograde JOBS={jobs}`": (scratch / "parallel", [sys.executable, "-I", "-m", "autograder", "autograde",
                                                                 ASSIGNMENT, "--jobs", str(jobs)]),
    }
    if serial_sandbox:
        runs["serial `nbgrader autograde` (this configuration)"] = (scratch / "serial", nbgrader_cmd)
    seconds = {}
    for name, (root, command) in runs.items():
        started = time.monotonic()
        proc = subprocess.run(command, cwd=root, env=nbgrader_env(), capture_output=True, text=True)
        seconds[name] = time.monotonic() - started
        print(f"{name}: {seconds[name]:.0f} s (exit status {proc.returncode}, load average "
              f"{os.getloadavg()[0]:.1f})", flush=True)
        if proc.returncode != 0:
            print("\n".join((proc.stdout + proc.stderr).splitlines()[-20:]))
            return 1
    parallel = gradebook_rows(scratch / "parallel")
    same = True
    if serial_sandbox:
        same = gradebook_rows(scratch / "serial") == parallel
        print(f"make autograde and serial nbgrader autograde agree on every gradebook row "
              f"({len(parallel)} rows, {size} submissions): {same}")
    # The baseline must have graded (its test cells in the kernel), else it times less work.
    plain_totals, parallel_totals = total_scores(gradebook_rows(scratch / "plain")), total_scores(parallel)
    graded_alike = plain_totals == parallel_totals
    print(f"totals: {sorted(set(parallel_totals.values()))}; the plain run's equal them for every student: "
          f"{graded_alike}")
    if not graded_alike:
        print("differing students (plain, make autograde): " + ", ".join(
            f"{s} ({plain_totals.get(s)}, {parallel_totals.get(s)})" for s in sorted(set(plain_totals) | set(parallel_totals))
            if plain_totals.get(s) != parallel_totals.get(s)))
    plain_s, parallel_s = list(seconds.values())[:2]
    print(f"ratio plain serial nbgrader / make autograde: {plain_s / parallel_s:.2f}")
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if same and graded_alike else 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--jobs", "-j", type=int, default=None)
    parser.add_argument("--keep", type=Path, help="build the courses here and keep them")
    parser.add_argument("--no-serial-sandbox", action="store_true",
                        help="skip the serial run with this configuration (and the gradebook comparison)")


def run(args: argparse.Namespace) -> int:
    return bench(args.submissions, args.jobs or default_jobs(), args.keep, not args.no_serial_sandbox)


def main(argv=None) -> int:
    from autograder.frontends import commands

    return commands.main(["class-bench", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
