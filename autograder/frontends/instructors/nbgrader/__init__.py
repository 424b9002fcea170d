"""nbgrader, graded by the one engine: the plugins that nbgrader_config.py switches on, one per
module as nbgrader's own are (nbgrader_config.py names each class by its import path).

- :mod:`.execute`: :class:`~.execute.SandboxExecute`, in place of nbgrader's ``Execute`` (the
  kernel execution): runs the notebook once in the confined worker, the one ``make test`` and
  CI use, and fills every cell's outputs and each stage's test cell (its report and score)
  from that one run. No student code runs in a Jupyter kernel, in nbgrader's process or
  anywhere unconfined: it cannot reach the gradebook, the venv or the notebooks nbgrader writes.
- :mod:`.precomputed`: the runs ``make autograde``'s workers computed ahead, handed to
  ``SandboxExecute`` in this process's memory (:func:`~.precomputed.offer`, :func:`~.precomputed.take`).
- :mod:`.extra_credit`: :class:`~.extra_credit.SaveExtraCredit`, the bonus stages' score as
  nbgrader extra credit.
- :mod:`.overwrite`: :class:`~.overwrite.QuietOverwriteCells`, nbgrader's ``OverwriteCells``
  without its false alarm on untouched test cells.
- :mod:`.late`: :class:`~.late.LatePenalty`, a share of the score per day late, capped.
- :mod:`.export`: :class:`~.export.StageCsvExport` (``nbgrader export``): a row per student, a
  column per stage, the total, the late penalty, the extra credit and what went wrong;
  :mod:`.lms`: with a roster, the Canvas or Moodle import file beside it.
- :mod:`.feedback`: :class:`~.feedback.ReadableFeedback` (``make feedback``).
- :mod:`.stages`: what they share: the chapter of an assignment, each stage's test cell, a
  stage's CSV column, the hidden seeds of a test cell, which notebook of a folder is submitted.
"""
