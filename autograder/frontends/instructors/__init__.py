"""An instructor's commands: the release, nbgrader's plugins, the students' repository, the regrade, the class report."""
