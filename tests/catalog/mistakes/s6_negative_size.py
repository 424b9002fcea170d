"""The split into heads asks for a negative head_dim: a negative size in the view."""
STAGE = 6
HINT = "negative size"


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        split = (b, num_tokens, self.num_heads, -self.head_dim)
        keys = self.W_key(x).view(split).transpose(1, 2)
        queries = self.W_query(x).view(split).transpose(1, 2)
        values = self.W_value(x).view(split).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj((attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))
