"""After the transpose, keys.shape[1] is num_heads: the scale uses the wrong axis."""
STAGE = 6
HINT = "keys.shape[-1]"
# batch = d_out = 2 in the book example: sizes that all differ tell keys.shape[1] from d_out
CHECK_HINTS = {"6.1": "keys.shape[1]"}


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
