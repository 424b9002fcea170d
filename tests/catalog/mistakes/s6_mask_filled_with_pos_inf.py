"""Masks the heads' scores with float("inf"), the sign lost: NaN for every query with a hidden
score."""
STAGE = 6
HINT = "+inf instead of -inf"


class MultiHeadAttention(MultiHeadAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        split = (b, num_tokens, self.num_heads, self.head_dim)
        queries = self.W_query(x).view(split).transpose(1, 2)
        keys = self.W_key(x).view(split).transpose(1, 2)
        values = self.W_value(x).view(split).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("inf"))
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
