"""The book's submission with MultiHeadAttention doing its attention in one call of
F.scaled_dot_product_attention: right, but stage 6 teaches that computation, so the call
policy refuses stage 6 (and only stage 6: the GPT-2 builder is not charged for it)."""
REFUSED = [6]

import torch.nn.functional as F  # noqa: E402


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x):
        b, num_tokens, _ = x.shape
        split = [layer(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
                 for layer in (self.W_query, self.W_key, self.W_value)]
        context = F.scaled_dot_product_attention(*split, is_causal=True,
                                                 dropout_p=self.dropout.p if self.training else 0.0)
        return self.out_proj(context.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))
