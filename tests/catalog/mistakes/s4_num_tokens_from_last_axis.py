"""Reads num_tokens from the last axis of x (that is d_in), so the mask is sliced to the
wrong size."""
STAGE = 4
HINT = "d_in"


class CausalAttention(CausalAttention):
    def forward(self, x):
        num_tokens = x.shape[-1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(attn_weights) @ values
