"""The confined worker and everything that keeps it on a leash: the lowest layer, which
imports nothing above it (core, chapters, front ends).

Two sides. The worker's (it runs inside the confined process and so reads none of the
grader): ``child`` (its main), ``workspace``, ``confinement``, ``oslayer``, ``wire``,
``loader`` and ``forkserver`` (the preloaded process that forks workers). The grader's:
``worker`` (:class:`~autograder.sandbox.worker.Worker`), ``limits``, ``launch``,
``preload``, ``scratch``, ``strays``, ``restore``, ``forkpool``, ``cgroups`` and ``errors``.
pyproject.toml's import-linter contracts hold both fences.
"""

# In the environment of a process that runs a notebook's cells to grade or time them (the
# worker, the benchmark): the notebook's test cells do nothing there.
TEST_CELLS_OFF = "AUTOGRADER_TEST_CELLS_OFF"
