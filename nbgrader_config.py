"""nbgrader settings. nbgrader reads this file only from the current directory, so every
nbgrader command runs from the repository root (the Makefile does so)."""

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.submitted_directory = "grading/submitted"
c.CourseDirectory.autograded_directory = "grading/autograded"
c.CourseDirectory.feedback_directory = "grading/feedback"
c.CourseDirectory.db_assignments = [dict(name="ch03_attention")]
c.CourseDirectory.db_url = "sqlite:///grading/gradebook.db"
c.CourseDirectory.assignment_id = "ch03_attention"

# The release keeps no outputs, and a stub raises an error a student can act on.
c.ClearOutput.enabled = True
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("not implemented yet: replace this line with your code")'
}
