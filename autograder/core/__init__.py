"""The chapter-agnostic engine: checks, their results, comparisons, examples, the submission proxy
and the grading run; it uses only the sandbox below it."""
