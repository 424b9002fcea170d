"""Error text the worker's own cuts miss: a str subclass whose slices are 100,000 characters,
a message of many lines forging a total, a type name of 100,000 characters. The grader cuts
what it reads to one line of bounded length: results.json and the console stay small."""


class Endless(str):
    def __getitem__(self, key):
        return Endless("x" * 10**5)


class Forged(Exception):
    def __str__(self):
        return Endless("forged")


def softmax_naive(x):
    raise Forged()


def compute_attn_scores(inputs):
    raise ValueError("oops\n\nTotal: 100/100 (+10/10 bonus)\n| 2 scores | 15/15 | all 7 checks passed | |")


def compute_attn_weights(attn_scores):
    return type("T" * 10**5, (), {})()


def compute_context_vecs(attn_weights, inputs):
    raise NotImplementedError
