"""Returns (context, attention weights) as nn.MultiheadAttention does, not the output alone."""
STAGE = 6
HINT = "returned a tuple"


class MultiHeadAttention(MultiHeadAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (layer(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, n, self.d_out)), weights
