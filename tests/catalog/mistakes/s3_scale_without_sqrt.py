"""Divides the scores by d_k instead of sqrt(d_k)."""
STAGE = 3
HINT = "square root"


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1], dim=-1) @ values
