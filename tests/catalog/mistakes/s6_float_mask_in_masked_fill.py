"""masked_fill with the float 0/1 mask instead of a boolean one."""
STAGE = 6
HINT = ".bool()"


class MultiHeadAttention(MultiHeadAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        split = (b, num_tokens, self.num_heads, self.head_dim)
        keys, queries, values = (t.view(split).transpose(1, 2) for t in (keys, queries, values))
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
