"""Maintainers' tools run by make (bench, bench-grader) or by hand (class_bench): they only measure."""
