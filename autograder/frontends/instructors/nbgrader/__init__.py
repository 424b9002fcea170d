"""nbgrader's plugins, one per module, switched on by nbgrader_config.py: :mod:`.execute` (the
sandboxed run in place of nbgrader's kernel), :mod:`.precomputed`, :mod:`.extra_credit`,
:mod:`.overwrite`, :mod:`.late`, :mod:`.repair`, :mod:`.outcome`, :mod:`.export` and
:mod:`.lms`, :mod:`.feedback`; :mod:`.stages` is what they share.
"""
