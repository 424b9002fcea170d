"""Splits into heads with a single view(b, num_heads, num_tokens, head_dim): tokens and features mix."""
STAGE = 6
HINT = "mixes tokens and features"


class MultiHeadAttention(MultiHeadAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        split = (b, self.num_heads, num_tokens, self.head_dim)
        keys, queries, values = self.W_key(x).view(split), self.W_query(x).view(split), self.W_value(x).view(split)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((attn_weights @ values).contiguous().view(b, num_tokens, self.d_out))
