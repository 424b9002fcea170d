"""The release's stubs, untouched: the score every cheating attempt is measured against."""


def softmax_naive(x):
    raise NotImplementedError("Stage 1 (softmax): implement softmax_naive")


def compute_attn_scores(inputs):
    raise NotImplementedError("Stage 2 (scores): implement compute_attn_scores")


def compute_attn_weights(attn_scores):
    raise NotImplementedError("Stage 2 (scores): implement compute_attn_weights")


def compute_context_vecs(attn_weights, inputs):
    raise NotImplementedError("Stage 2 (scores): implement compute_context_vecs")
