"""Copy-paste: SelfAttention_v1's values computed with W_key."""
STAGE = 3
HINT = "the values (the input times W_value)"


class SelfAttention_v1(SelfAttention_v1):
    def forward(self, x):
        queries = x @ self.W_query
        keys = x @ self.W_key
        values = x @ self.W_key
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values
