"""nbgrader settings. nbgrader reads this file only from the current directory, so every
nbgrader command runs from the repository root (the Makefile does so)."""

import os

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.root = os.path.abspath(".")
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.submitted_directory = "grading/submitted"
c.CourseDirectory.autograded_directory = "grading/autograded"
c.CourseDirectory.feedback_directory = "grading/feedback"
c.CourseDirectory.db_url = "sqlite:///grading/gradebook.db"

# The release keeps no outputs, and a stub raises an error a student can act on.
c.ClearOutput.enabled = True
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("not implemented yet: replace this line with your code")'
}
