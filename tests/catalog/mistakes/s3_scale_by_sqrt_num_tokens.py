"""Scales by the square root of the number of tokens (keys.shape[0]) instead of d_k."""
STAGE = 3
HINT = "keys.shape[0]"


class SelfAttention_v1(SelfAttention_v1):
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[0] ** 0.5, dim=-1)
        return attn_weights @ values
