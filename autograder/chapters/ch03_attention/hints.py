"""What an exception usually means in each stage of this chapter, tried before the general
table of :mod:`autograder.core.hints`: (pattern, hint) per stage id."""

from autograder.core.chapter import ErrorHints
from autograder.core.hints import NEGATIVE_SIZE, SHAPE_ERROR, fix

ERROR_HINTS: dict[str, ErrorHints] = {
    "softmax": [
        (r"[Dd]imension out of range", "the input may have any number of dimensions (the book's scores "
         "are 1-d): take the sum along dim=-1, the last dimension, which every tensor has"),
        (SHAPE_ERROR, "the sums must keep their dimension to broadcast against each row" +
         fix(": exp_x.sum(dim=-1, keepdim=True)")),
    ],
    "scores": [
        (SHAPE_ERROR, "inputs are (num_tokens, d): the scores are (num_tokens x num_tokens), every token with every "
         "token, and the context vectors (num_tokens x d)" +
         fix(": inputs @ inputs.T and attn_weights @ inputs")),
    ],
    "self_attention": [
        (r"permute\(\): duplicate dims|permute.*does not match the length", "permute lists every axis once, in the "
         "new order: the keys' transpose for the scores is keys.T, keys.transpose(0, 1) or keys.permute(1, 0)"),
        (SHAPE_ERROR, "x is (num_tokens, d_in): queries, keys and values are (num_tokens, d_out), the "
         "scores (num_tokens, num_tokens); v1 multiplies x @ W (W of shape (d_in, d_out))" +
         fix(": the scores are queries @ keys.T")),
    ],
    "causal": [
        (r"buffer name should be a string", "register_buffer takes the buffer's name first, then the tensor" +
         fix(": self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))")),
        (SHAPE_ERROR, "x is (batch, num_tokens, d_in): transpose only the keys' last two axes "
         "(" + fix("keys.transpose(1, 2); ") + "keys.T reverses the batch axis too) and slice the mask to "
         "the input's num_tokens"),
    ],
    "wrapper": [
        (SHAPE_ERROR, "each head maps (batch, num_tokens, d_in) to (batch, num_tokens, d_out); "
         "concatenate the heads' outputs along dim=-1, the features"),
    ],
    "gpt2": [
        (r"AssertionError|ValueError", "MultiHeadAttention rejected the sizes: GPT-2 small has d_in = d_out = 768 "
         "and num_heads = 12 (head_dim = 768 // 12 = 64 is computed inside)"),
        (SHAPE_ERROR, "GPT-2 small takes 768-wide inputs of up to 1024 tokens: d_in = d_out = 768, "
         "context_length = 1024"),
    ],
    "mha": [
        (r"permute\(\): duplicate dims|permute.*does not match the length", "permute lists every axis once, in the "
         "new order: splitting the heads, (b, num_tokens, num_heads, head_dim).permute(0, 2, 1, 3) moves the heads "
         "before the tokens, the keys' transpose swaps the last two axes, and the merge moves the heads back"),
        (r"unflatten: Provided sizes", "unflatten splits one axis into the sizes given: the heads come from the last "
         "axis, .unflatten(-1, (num_heads, head_dim)), and a (b * num_heads) axis from axis 0, .unflatten(0, (b, "
         "num_heads))"),
        (r"buffer name should be a string", "register_buffer takes the buffer's name first, then the tensor" +
         fix(": self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))")),
        (r"(?i)(ValueError|AssertionError).*divisib", "the divisibility check refused sizes that divide evenly "
         "(every size the grader builds with, outside check 6.3, is a d_out that num_heads divides): raise only "
         "when num_heads does not divide d_out"),
        (NEGATIVE_SIZE, "a view or reshape was asked for a negative size (the error gives the shape and the axis): "
         "the split into heads asks for four sizes, the batch, the tokens, num_heads and head_dim (d_out shared among the heads), "
         "and the merge for three, the batch, the tokens and d_out, each a positive size read from x or the module"),
        (SHAPE_ERROR, "follow the shapes: the heads split to (b, num_heads, num_tokens, head_dim), the keys' last two "
         "axes swapped for the scores, the mask sliced to num_tokens, the heads merged back to (b, num_tokens, "
         "d_out)" + fix(": .view(b, num_tokens, num_heads, head_dim).transpose(1, 2), keys.transpose(2, 3), "
                        "[:num_tokens, :num_tokens], .transpose(1, 2).contiguous().view(b, num_tokens, d_out)")),
        (r"^AssertionError", "an assert refused sizes that divide evenly: the one check MultiHeadAttention needs is "
         "that d_out is divisible by num_heads" + fix(", assert d_out % num_heads == 0")),
    ],
}
