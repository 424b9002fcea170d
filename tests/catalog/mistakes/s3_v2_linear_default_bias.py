"""SelfAttention_v2 makes its layers with nn.Linear(d_in, d_out), whose bias is on by default: qkv_bias is
ignored. The book example only shows weights unlike the book's; the structure check names the bias, and the
stage's row must show that, not the guess about the order of the weights."""
STAGE = 3
HINT = "bias must follow the qkv_bias argument"


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out)
        self.W_key = nn.Linear(d_in, d_out)
        self.W_value = nn.Linear(d_in, d_out)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values
