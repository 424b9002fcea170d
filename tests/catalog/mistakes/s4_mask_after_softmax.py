"""Zeroes the future weights after the softmax and does not renormalise."""
STAGE = 4
HINT = "before the softmax"


class CausalAttention(CausalAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = attn_weights * (1 - self.mask[:num_tokens, :num_tokens])
        return self.dropout(attn_weights) @ values
