"""Adds the heads' outputs instead of concatenating them."""
STAGE = 5
HINT = "torch.cat"


class MultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        return sum(head(x) for head in self.heads)
