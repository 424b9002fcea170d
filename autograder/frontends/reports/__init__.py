"""What a grade looks like, one module per output, imported by name."""
