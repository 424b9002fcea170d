"""Softmax over the queries (dim=0) instead of the keys."""
STAGE = 3
HINT = "wrong dimension"


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=0) @ values
