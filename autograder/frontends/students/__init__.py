"""What a student runs: the command line (`python -m autograder grade`, `make test`) and the notebook's test cells."""
