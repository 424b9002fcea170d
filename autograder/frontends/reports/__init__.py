"""What a grade looks like, one module per output (imported by name, never as a whole):  -
:mod:`.text`: the plain text every output shares: :func:`~.text.format_points` (the one
points formatter), a stage's report (:func:`~.text.stage_text`, printed by the notebook's
test cells and stored by nbgrader), the total line, the confinement line, each hint once; -
:mod:`.console`: the table ``make test`` prints (rich), and :func:`~.console.console_preload`;
- :mod:`.results_json`: Gradescope's results.json (:func:`~.results_json.gradescope_json`),
the provisional zero written before grading, the hidden-examples tests; - :mod:`.safe_write`:
atomic writes that never replace a file this grader did not write; - :mod:`.html`: the
notebook's HTML feedback for one stage; - :mod:`.heatmap`: the attention-weights picture of a
failing example (matplotlib).
"""
