"""Creates W_key before W_query: right attention, but not the book's weights for a seed."""
STAGE = 3
HINT = "in this order"


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values
