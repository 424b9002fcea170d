"""An error message full of console markup and terminal control codes (a closing tag with
no opening tag, a clear-screen sequence): printed as text, never interpreted, never a
crash of the grader's console table."""


def softmax_naive(x):
    raise ValueError("[/red] [bold] \x1b[2J\x1b[31m all checks passed \x07")
