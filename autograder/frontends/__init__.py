"""Front ends: every way a grade reaches a student or an instructor, one folder per audience.
Each runs the one engine (:mod:`autograder.core`) and shows its report in its own format.

- :mod:`.commands`: ``python -m autograder COMMAND``, the one entry point of every job below;
- :mod:`.students`: the command line (``make test``), the notebook's test cells;
- :mod:`.hosted`: CI on each push (``make ci-grade``), Classroom 50's runner, Gradescope;
- :mod:`.instructors`: the release, nbgrader's plugins and ``make autograde``, the due date, the
  students' repository, the deadline regrade, the class report;
- :mod:`.maintainers`: the demo, the simulated class, the benches (never shipped to students);
- shared: :mod:`.reports` (table, text, results.json, HTML, safe writes), :mod:`.finder` (which
  notebook of a folder is the submission), :mod:`.fingerprint` (tamper evidence, what ships),
  :mod:`.jobs` (default parallelism).

Sandbox and core never import this package (pyproject.toml's import contracts).
"""
