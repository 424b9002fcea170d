"""Front ends: every way a grade reaches a student or an instructor. Each runs the one engine
(:mod:`autograder.core`) and shows its report in its own format.

- :mod:`.cli` (``python -m autograder``, ``make test``) and :mod:`.ci` (``make ci-grade``:
  a grade annotation, JUnit, results.json, the step summary); :mod:`.classroom50` (Classroom 50's
  autograder folder and its grading);
- :mod:`.gradescope` (the autograder zip and what runs in it);
- :mod:`.notebook` (the notebook's test cells) and :mod:`.cellorder` (its warnings);
- :mod:`.nbgrader` (the nbgrader plugins), :mod:`.stagegrades` (their sandboxed run),
  :mod:`.autograde` (``make autograde``), :mod:`.class_summary` (its table),
  :mod:`.simulated_class` (generated students) and :mod:`.class_bench` (the class benchmark);
- :mod:`.student_repo` (``make student-repo``), :mod:`.grade_repos` (``make grade-repos``)
  and :mod:`.fingerprint` (tamper evidence);
- shared: :mod:`.reports` (table, text, results.json, HTML, safe writes), :mod:`.finder`
  (which notebook of a folder is the submission), :mod:`.dates` (the instants instructors type),
  :mod:`.jobs` (default parallelism).

Sandbox and core never import this package (pyproject.toml's import contracts).
"""
