"""Concatenates along dim=1 (the tokens) instead of the last dimension."""
STAGE = 5
HINT = "last dimension"


class MultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=1)
