"""nbgrader's plugins, switched on by nbgrader_config.py; :mod:`.stages` is what they share."""
