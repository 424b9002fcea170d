"""FusedQKVAttention hands the triu mask (True = hidden) to scaled_dot_product_attention, where
a boolean mask means the opposite (True = may attend)."""
STAGE = 8
HINT = "inverted"


class FusedQKVAttention(FusedQKVAttention):
    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).split(self.d_out, dim=2)
        q, k, v = (t.reshape(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3) for t in (q, k, v))
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask.bool()[:n, :n])
        return self.proj(context.permute(0, 2, 1, 3).reshape(b, n, self.d_out))
