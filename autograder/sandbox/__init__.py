# In the environment of a process that runs a notebook's cells to grade or time them (the
# worker, the benchmark): the notebook's test cells do nothing there.
TEST_CELLS_OFF = "AUTOGRADER_TEST_CELLS_OFF"
