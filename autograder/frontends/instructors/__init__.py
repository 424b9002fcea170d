"""An instructor's commands: the release, nbgrader's glue (`make autograde`, feedback, export),
the students' repository, the deadline regrade, the due date, the class report.
"""
