"""[CausalAttention(...)] * num_heads: the same head, with the same weights, num_heads times."""
STAGE = 5
HINT = "share one set of weights"


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
