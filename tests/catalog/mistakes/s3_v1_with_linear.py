"""SelfAttention_v1 built from nn.Linear layers (that is v2's design)."""
STAGE = 3
HINT = "nn.Parameter"


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values
