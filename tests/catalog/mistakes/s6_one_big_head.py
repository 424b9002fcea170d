"""Never splits into heads: one head of width d_out, scaled by sqrt(d_out)."""
STAGE = 6
HINT = "one head"


class MultiHeadAttention(MultiHeadAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(attn_weights @ values)
