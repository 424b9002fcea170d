"""Front ends, one folder per audience, each running the one engine: :mod:`.students` (``make
test``, the notebook's test cells), :mod:`.hosted` (CI, Classroom 50, Gradescope),
:mod:`.instructors` (release, nbgrader, the students' repository, the regrade, the class report),
:mod:`.maintainers` (the demo, never shipped to students); shared: :mod:`.commands` (``python -m
autograder COMMAND``), :mod:`.reports`, :mod:`.finder` (which notebook is the submission),
:mod:`.fingerprint` (tamper evidence, what ships). Sandbox and core never import this package.
"""
