"""Divides the weights by sqrt(d_k) after the softmax: they no longer sum to 1."""
STAGE = 3
HINT = "before the softmax"


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T, dim=-1) / keys.shape[-1] ** 0.5 @ values
