"""SelfAttention_v2 forgets the scale (v1 is right): the transfer exercise must blame v2."""
STAGE = 3
HINT = "not scaled"
CHECK_HINTS = {"3.4": "not scaled"}


class SelfAttention_v2(SelfAttention_v2):
    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_weights = torch.softmax(queries @ keys.T, dim=-1)
        return attn_weights @ values
