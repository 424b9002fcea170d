"""torch.randn instead of torch.rand for SelfAttention_v1's weights."""
STAGE = 3
HINT = "torch.rand("


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.randn(d_in, d_out))
        self.W_key = nn.Parameter(torch.randn(d_in, d_out))
        self.W_value = nn.Parameter(torch.randn(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values
