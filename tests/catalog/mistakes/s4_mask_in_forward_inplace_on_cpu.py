"""Builds the mask inside forward on the CPU and applies it in place with the book's
masked_fill_: runs on a CPU machine, breaks on a GPU."""
STAGE = 4
HINT = "device=x.device"
CHECK_HINTS = {"4.7": "device=x.device"}  # the device points are lost, on a CPU machine


class CausalAttention(CausalAttention):  # the correct __init__; only forward is wrong
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
        attn_scores.masked_fill_(mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values
