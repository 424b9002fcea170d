"""Splits into heads with .view(b, num_heads, num_tokens, head_dim) and merges back with the book's transpose."""
STAGE = 6
HINT = "(b, num_heads, num_tokens, head_dim) in one view"
CHECK_HINTS = {"6.9": "(b, num_heads, num_tokens, head_dim)"}


class MultiHeadAttention(MultiHeadAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, self.num_heads, num_tokens, self.head_dim)
        queries = self.W_query(x).view(b, self.num_heads, num_tokens, self.head_dim)
        values = self.W_value(x).view(b, self.num_heads, num_tokens, self.head_dim)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
