"""inputs.T @ inputs: dot products between features, not between tokens."""
STAGE = 2
HINT = "inputs @ inputs.T"


def compute_attn_scores(inputs):
    return inputs.T @ inputs
