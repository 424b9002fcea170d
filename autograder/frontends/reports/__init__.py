"""What a grade looks like, one module per output, imported by name: the plain text every output
shares, the console table, results.json, the diagnosis records, the notebook's HTML and heatmap."""
