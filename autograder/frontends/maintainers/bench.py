"""Benchmarks: how fast the grader is, and how fast each kind of multi-head attention is.

``python -m autograder bench grader``     (``make bench-grader``) times ``make test`` on a correct
notebook against a bare ``import torch`` and against ``nbgrader validate``.
``python -m autograder bench attention``  (``make bench``) times the wrapper of independent heads,
the weight-split MultiHeadAttention, fused QKV and PyTorch's fused SDPA kernel.

Both only measure: nothing here decides a grade. This module is their command line (the Makefile's
``bench`` and ``bench-grader``); the grader's benchmark is :mod:`.bench_grader`, the attention
benchmark :mod:`.bench_attention`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.frontends.maintainers.bench_attention import REPO, bench_attention
from autograder.frontends.maintainers.bench_grader import print_grader

SOLUTION = REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
ASSIGNMENT = REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", required=True)
    grader = sub.add_parser("grader", help="make test vs import torch vs nbgrader validate")
    grader.add_argument("--notebook", type=Path, default=SOLUTION, help="a notebook that earns full marks")
    grader.add_argument("--repeat", type=int, default=3, help="runs of each command (median reported)")
    grader.add_argument("--no-validate", action="store_true",
                        help="leave nbgrader validate out (11 s a run): the ratio to torch and the breakdown only")
    grader.add_argument("--no-test-cells", action="store_true",
                        help="leave out the timing of the test cells on wrong stages (tests/catalog/mistakes)")
    attention = sub.add_parser("attention", help="wrapper vs weight split vs fused QKV vs SDPA")
    attention.add_argument("--notebook", type=Path, default=SOLUTION if SOLUTION.exists() else ASSIGNMENT,
                           help="the notebook whose classes are timed (default: the solutions when present)")
    attention.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                           help="auto: the CPU, and CUDA too when present")
    attention.add_argument("--plot", type=Path, default=REPO / "build" / "bench.png", help="where the PNG goes")
    attention.add_argument("--threads", type=int, default=0,
                           help="CPU threads for torch (default: torch's own choice, one per core); 1 gives "
                                "steadier figures on a machine busy with other work")


def run(args: argparse.Namespace) -> int:
    if args.what == "grader":
        print_grader(args.notebook.resolve(), args.repeat, validate=not args.no_validate,
                     test_cells=not args.no_test_cells)
        return 0
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device is available here", file=sys.stderr)
        return 2
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    devices = {"cpu": ["cpu"], "cuda": ["cuda"]}.get(args.device,
                                                      ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    return bench_attention(args.notebook.resolve(), devices, args.plot.resolve())


def main(argv=None) -> int:
    from autograder.frontends import commands

    return commands.main(["bench", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
