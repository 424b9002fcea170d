"""nbgrader's plugins, switched on by nbgrader_config.py: :mod:`.execute` (the sandboxed run in place
of nbgrader's kernel), :mod:`.plugins` (repairs, extra credit, late penalty, the outcome),
:mod:`.export` (grades.csv and the LMS files), :mod:`.feedback`; :mod:`.stages` is what they share.
"""
