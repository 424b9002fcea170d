"""softmax_naive overwrites its input with x.exp_(): the caller's scores change."""
STAGE = 1
HINT = "changed its argument x in place (exp_)"
CHECK_HINTS = {"1.4": "exp_"}


def softmax_naive(x):
    exp_x = x.exp_()
    return exp_x / exp_x.sum(dim=-1, keepdim=True)
