"""Reads num_tokens on the first call and keeps it: every later call on another length is wrong.
Each check builds a new module, so only a second call on the same one shows it."""
STAGE = 6
HINT = "keeps something from one call to the next"


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x):
        b = x.shape[0]
        if not hasattr(self, "n"):
            self.n = x.shape[1]
        n = self.n
        q, k, v = (layer(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2) for layer in (self.W_query, self.W_key, self.W_value))
        s = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        w = self.dropout(torch.softmax(s / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((w @ v).transpose(1, 2).reshape(b, n, self.d_out))
