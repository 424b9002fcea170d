"""Reads num_tokens from the last axis of x (that is d_in), so the mask is sliced to the
wrong size. Where d_in = 1 the 1 x 1 mask hides nothing, and the output is exactly that of
no mask: the row names that (the output's evidence); the shape check names the sizes."""
STAGE = 4
HINT = "causal mask"
CHECK_HINTS = {"4.3": "d_in"}  # the sizes of the shape error: d_in meets num_tokens


class CausalAttention(CausalAttention):
    def forward(self, x):
        num_tokens = x.shape[-1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(attn_weights) @ values
