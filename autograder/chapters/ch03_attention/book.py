"""The chapter's worked example and the tensors it prints (4 decimals), reproduced with
torch 2.13 on CPU. None of them depends on a dropout mask."""

import torch

# "Your journey starts with one step", one 3-d embedding per token.
INPUTS = torch.tensor([
    [0.43, 0.15, 0.89],  # Your
    [0.55, 0.87, 0.66],  # journey
    [0.57, 0.85, 0.64],  # starts
    [0.22, 0.58, 0.33],  # with
    [0.77, 0.25, 0.10],  # one
    [0.05, 0.80, 0.55],  # step
])
BATCH = torch.stack((INPUTS, INPUTS))

ATTN_SCORES = torch.tensor([
    [0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
    [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
    [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
    [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
    [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
    [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450],
])
ATTN_WEIGHTS = torch.tensor([
    [0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
    [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
    [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
    [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
    [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
    [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896],
])
CONTEXT_VECS = torch.tensor([
    [0.4421, 0.5931, 0.5790],
    [0.4419, 0.6515, 0.5683],
    [0.4431, 0.6496, 0.5671],
    [0.4304, 0.6298, 0.5510],
    [0.4671, 0.5910, 0.5266],
    [0.4177, 0.6503, 0.5645],
])
# softmax_naive(attn_scores[1]): the weights of the query "journey"
JOURNEY_WEIGHTS = ATTN_WEIGHTS[1]

# manual_seed(123); SelfAttention_v1(3, 2)(INPUTS)
SELF_ATTENTION_V1 = torch.tensor([
    [0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
    [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040],
])
# manual_seed(789); SelfAttention_v2(3, 2)(INPUTS)
SELF_ATTENTION_V2 = torch.tensor([
    [-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
    [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693],
])
# manual_seed(123); CausalAttention(3, 2, 6, 0.0)(BATCH)[0]
CAUSAL = torch.tensor([
    [-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
    [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081],
])
# manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(BATCH)[0]
WRAPPER = torch.tensor([
    [-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
    [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
    [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493],
])
# the exercise: d_out = 1 makes the two-head wrapper's output 2-dimensional
WRAPPER_D_OUT_1 = torch.tensor([
    [-0.5740, 0.2216], [-0.7320, 0.0155], [-0.7774, -0.0546],
    [-0.6979, -0.0817], [-0.6538, -0.0957], [-0.6424, -0.1065],
])
# manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(BATCH)[0]
MHA = torch.tensor([
    [0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
    [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028],
])

# "Hello shiny sun": three 3-d embeddings; the context vector of "shiny" (exact computation;
# rounding the intermediate steps by hand gives [0.3992, 0.3858, 0.8610]).
HELLO_SHINY_SUN = torch.tensor([[0.34, 0.22, 0.54], [0.53, 0.34, 0.98], [0.29, 0.54, 0.93]])
SHINY_CONTEXT = torch.tensor([0.3990, 0.3854, 0.8610])

GPT2_SMALL = dict(d_in=768, d_out=768, num_heads=12, context_length=1024, dropout=0.0)
GPT2_SMALL_PARAMS = 2_360_064
