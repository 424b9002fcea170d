"""Grading run by a hosted service on each submission: a CI job (`make ci-grade`), Classroom 50's runner, Gradescope's autograder."""
