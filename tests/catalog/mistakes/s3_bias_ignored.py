"""SelfAttention_v2 ignores qkv_bias."""
STAGE = 3
HINT = "bias=qkv_bias"


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values
