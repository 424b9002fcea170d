"""SDPAMultiHeadAttention that never passes dropout_p: right in eval mode, no dropout in
training (eval-only checks gave it full marks)."""
STAGE = 8
HINT = "dropout_p"


class SDPAMultiHeadAttention(SDPAMultiHeadAttention):
    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (layer(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        context = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(context.transpose(1, 2).reshape(b, n, self.d_out))
