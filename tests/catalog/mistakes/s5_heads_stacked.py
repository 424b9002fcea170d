"""torch.stack adds a new axis: (batch, tokens, d_out, heads)."""
STAGE = 5
HINT = "torch.cat"


class MultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        return torch.stack([head(x) for head in self.heads], dim=-1)
