"""The context as values @ attn_weights (operands swapped): a shape error."""
STAGE = 4
HINT = "the weights times the values"
# the shrunk example (d_out=1) raises alike for two steps: sizes that all differ name the one
CHECK_HINTS = {"4.3": "the weights times the values"}


class CausalAttention(CausalAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return values @ attn_weights
