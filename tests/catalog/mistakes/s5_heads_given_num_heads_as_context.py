"""Builds each head with num_heads where context_length goes: the heads' masks are num_heads wide and
every forward fails inside a head. The hint must name the heads' arguments, not the concatenation."""
STAGE = 5
HINT = "in CausalAttention's order"


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, num_heads, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
