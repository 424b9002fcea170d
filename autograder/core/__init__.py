"""The chapter-agnostic engine: checks and their results, the comparisons and example
strategies checks use, the submission proxy that calls into the worker, and the grading run
(:mod:`autograder.core.engine`) that drives one worker through a chapter's stages.

It knows no chapter (:mod:`autograder.chapters` brings them) and no front end; of the layers
below it, it uses only the sandbox, which runs the student's code.
"""
