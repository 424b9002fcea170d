import gc
import sys

from autograder.frontends.cli import main

code = main()
# The grade is printed, every file written and closed, the worker ended: what is left is
# Python's exit, whose final garbage collection walks every object of torch, hypothesis and the
# checks (0.7 to 1 s on a busy 2-core machine, make bench-grader's last rows). Frozen, they are
# left to the process's end; atexit handlers and the streams' flush still run.
gc.freeze()
sys.exit(code)
