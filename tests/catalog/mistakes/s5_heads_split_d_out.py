"""The wrapper splits d_out over the heads (d_out // num_heads each), as MultiHeadAttention does."""
STAGE = 5
HINT = "split d_out among them"
CHECK_HINTS = {"5.3": "split d_out among them"}


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
