"""Maintainers' tools: the demo (``make demo``) and its simulated class; never shipped to students."""
