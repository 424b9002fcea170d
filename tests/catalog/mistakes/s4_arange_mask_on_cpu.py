"""Compares two torch.arange(num_tokens) index vectors to build the causal mask in forward:
both are created on the CPU, whatever device the input is on."""
STAGE = 4
HINT = "device=x.device"
CHECK_HINTS = {"4.7": "device=x.device"}  # the device points are lost, on a CPU machine


class CausalAttention(CausalAttention):
    def forward(self, x):
        num_tokens = x.size(1)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        pos = torch.arange(num_tokens)
        future = pos.unsqueeze(0) > pos.unsqueeze(1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        scores = scores.masked_fill(future, float("-inf"))
        return self.dropout(scores.softmax(dim=-1)) @ v
