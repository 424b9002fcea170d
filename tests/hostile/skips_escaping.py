"""Switches off every escaping the worker does of its own (any module function named printable
or describe_error), then raises a message that clears the screen, recolours a fake total and
sets the terminal's title. The grader reads the worker's text as it arrives: control codes
become '?' there, on the console, in results.json and the step summary."""
import sys


def raw_error(exc):
    return {"kind": "exception", "type": type(exc).__name__, "message": str(exc), "where": "", "code": ""}


for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("autograder"):
        if hasattr(module, "printable"):
            module.printable = lambda text: text
        if hasattr(module, "describe_error"):
            module.describe_error = raw_error


def softmax_naive(x):
    raise ValueError("\x1b[2J\x1b[H\x1b[32mTotal: 100/100\x1b[0m\x07\x9b2J\x1b]0;graded\x07")


def compute_attn_scores(inputs):
    raise NotImplementedError


def compute_attn_weights(attn_scores):
    raise NotImplementedError


def compute_context_vecs(attn_weights, inputs):
    raise NotImplementedError
