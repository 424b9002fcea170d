"""Maintainers' tools: the demo's simulated class, the benches. They never ship to students (the
students' repository, the Gradescope zip and Classroom 50's folder leave this folder out).
"""
