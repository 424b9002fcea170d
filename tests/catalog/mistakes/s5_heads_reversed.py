"""Concatenates the heads in reverse order."""
STAGE = 5
HINT = "reverse order"


class MultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        return torch.cat([head(x) for head in reversed(self.heads)], dim=-1)
