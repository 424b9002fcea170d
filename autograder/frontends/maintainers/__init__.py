"""Maintainers' tools (the demo and its simulated class): never shipped to students."""
