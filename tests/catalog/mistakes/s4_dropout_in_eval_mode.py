"""F.dropout without training=self.training: drops weights in eval mode too."""
STAGE = 4
HINT = "eval mode"


class CausalAttention(CausalAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = torch.nn.functional.dropout(attn_weights, p=self.dropout.p)
        return attn_weights @ values
