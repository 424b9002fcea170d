"""Scales by the input's width (d_in) instead of the keys' (d_out)."""
STAGE = 3
HINT = "d_in"


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / x.shape[-1] ** 0.5, dim=-1) @ values
