"""The confined worker and what keeps it on a leash: the lowest layer. The worker's side imports
nothing of the grader's (pyproject.toml's import-linter contracts)."""
