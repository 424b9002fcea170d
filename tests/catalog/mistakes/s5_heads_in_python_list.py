"""Heads kept in a plain Python list: their weights are not registered and never move."""
STAGE = 5
HINT = "nn.ModuleList"


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
