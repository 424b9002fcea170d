"""attn_weights_bytes returns the size in MiB (a float), not in bytes."""
STAGE = 8
HINT = "the unit is wrong"
CHECK_HINTS = {"8.5": "MiB"}


def attn_weights_bytes(batch_size, num_heads, num_tokens, bytes_per_value):
    return batch_size * num_heads * num_tokens * num_tokens * bytes_per_value / (1024 * 1024)
