"""The class benchmark: plain serial ``nbgrader autograde`` (its kernel, no sandbox) against
``make autograde JOBS=n`` on one generated class, and serial nbgrader with this repository's
configuration, whose gradebook must equal make autograde's row for row.

    .venv/bin/python tests/tools/class_bench.py [--submissions 40] [--jobs N] [--keep DIR] [--no-serial-sandbox]
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

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from autograder.frontends.commands import default_jobs  # noqa: E402
from tools.simulated_course import (  # noqa: E402
    ASSIGNMENT,
    class_of,
    gradebook_rows,
    nbgrader_env,
    new_course,
    total_scores,
)

# Appended to the baseline's nbgrader_config.py: nbgrader's own kernel, told it validates, so
# that its test cells grade in the kernel (under autograde they defer to the sandbox).
PLAIN_NBGRADER = """
from nbgrader.converters import Autograde as _Autograde
from nbgrader.preprocessors import Execute as _Execute


class _KernelGrades(_Execute):
    # nbconvert starts the kernel through this synchronous wrapper, never the async one
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
    # the baseline must have graded, else it times less work
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="time make autograde against serial nbgrader on a simulated class")
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--jobs", "-j", type=int, default=None)
    parser.add_argument("--keep", type=Path, help="build the courses here and keep them")
    parser.add_argument("--no-serial-sandbox", action="store_true",
                        help="skip the serial run with this configuration (and the gradebook comparison)")
    args = parser.parse_args(argv)
    return bench(args.submissions, args.jobs or default_jobs(), args.keep, not args.no_serial_sandbox)


if __name__ == "__main__":
    sys.exit(main())
