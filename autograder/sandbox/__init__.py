"""The confined worker and everything that keeps it on a leash: the lowest layer, which
imports nothing above it (core, chapters, front ends).

Two sides. The worker's (it runs inside the confined process and so reads none of the
grader): ``child`` (its main), ``workspace``, ``confinement``, ``oslayer``, ``wire``,
``loader`` and ``forkserver`` (the preloaded process that forks workers). The grader's:
``worker`` (:class:`~autograder.sandbox.worker.Worker`), ``limits``, ``launch``,
``preload``, ``scratch``, ``strays``, ``restore``, ``forkpool``, ``cgroups``, ``errors`` and
``settings`` (what the grader was told, :class:`~autograder.sandbox.settings.Settings`).
pyproject.toml's import-linter contracts hold both fences.
"""
