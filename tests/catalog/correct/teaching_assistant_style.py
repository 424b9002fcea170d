"""Correct, as a teaching assistant writes a worked solution: one named intermediate per step
with shape comments, torch.matmul and keys.transpose(-2, -1), torch.div by a math.sqrt scaling
factor, the mask registered already as bool (torch.triu(..., diagonal=1).bool()) and filled
with float('-inf'), heads gathered by an explicit loop, merged with .transpose(1, 2).reshape."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def softmax_naive(x):
    # Step 1: exponentiate every entry
    numerator = torch.exp(x)
    # Step 2: add up the exponentials along the last dimension, keeping it for broadcasting
    denominator = torch.sum(numerator, dim=-1, keepdim=True)
    # Step 3: normalise, so that every slice along the last dimension sums to 1
    probabilities = numerator / denominator
    return probabilities


def compute_attn_scores(inputs):
    # inputs: (num_tokens, d) -> scores: (num_tokens, num_tokens)
    keys_transposed = inputs.transpose(-2, -1)
    attn_scores = torch.matmul(inputs, keys_transposed)
    return attn_scores


def compute_attn_weights(attn_scores):
    # every row (one query) becomes a probability distribution over the keys
    attn_weights = torch.softmax(attn_scores, dim=-1)
    return attn_weights


def compute_context_vecs(attn_weights, inputs):
    # (num_tokens, num_tokens) x (num_tokens, d) -> (num_tokens, d)
    context_vecs = torch.matmul(attn_weights, inputs)
    return context_vecs


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        # x: (num_tokens, d_in)
        queries = torch.matmul(x, self.W_query)  # (num_tokens, d_out)
        keys = torch.matmul(x, self.W_key)  # (num_tokens, d_out)
        values = torch.matmul(x, self.W_value)  # (num_tokens, d_out)
        attn_scores = torch.matmul(queries, keys.transpose(-2, -1))  # (num_tokens, num_tokens)
        scaling_factor = math.sqrt(self.d_out)
        scaled_scores = torch.div(attn_scores, scaling_factor)
        attn_weights = torch.softmax(scaled_scores, dim=-1)
        context_vecs = torch.matmul(attn_weights, values)  # (num_tokens, d_out)
        return context_vecs


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries = self.W_query(x)  # (num_tokens, d_out)
        keys = self.W_key(x)  # (num_tokens, d_out)
        values = self.W_value(x)  # (num_tokens, d_out)
        attn_scores = torch.matmul(queries, keys.transpose(-2, -1))
        scaling_factor = math.sqrt(self.d_out)
        scaled_scores = torch.div(attn_scores, scaling_factor)
        attn_weights = torch.softmax(scaled_scores, dim=-1)
        context_vecs = torch.matmul(attn_weights, values)
        return context_vecs


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        # True above the diagonal: those are the future tokens a query must not see
        future_mask = torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
        self.register_buffer("mask", future_mask)

    def forward(self, x):
        batch_size, num_tokens, d_in = x.shape
        queries = self.W_query(x)  # (batch, num_tokens, d_out)
        keys = self.W_key(x)  # (batch, num_tokens, d_out)
        values = self.W_value(x)  # (batch, num_tokens, d_out)

        attn_scores = torch.matmul(queries, keys.transpose(-2, -1))  # (batch, num_tokens, num_tokens)
        current_mask = self.mask[:num_tokens, :num_tokens]  # the inputs may be shorter than the context
        masked_scores = attn_scores.masked_fill(current_mask, float("-inf"))

        scaling_factor = math.sqrt(self.d_out)
        attn_weights = torch.softmax(torch.div(masked_scores, scaling_factor), dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vecs = torch.matmul(attn_weights, values)  # (batch, num_tokens, d_out)
        return context_vecs


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            single_head = CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
            self.heads.append(single_head)

    def forward(self, x):
        head_outputs = []
        for head in self.heads:
            head_output = head(x)  # (batch, num_tokens, d_out)
            head_outputs.append(head_output)
        combined = torch.cat(head_outputs, dim=-1)  # (batch, num_tokens, num_heads * d_out)
        return combined


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        future_mask = torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
        self.register_buffer("mask", future_mask)

    def forward(self, x):
        batch_size, num_tokens, d_in = x.shape

        # Step 1: project the inputs, (batch, num_tokens, d_out)
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)

        # Step 2: split d_out into heads, (batch, num_tokens, num_heads, head_dim)
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        keys = keys.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        values = values.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)

        # Step 3: put the heads first, (batch, num_heads, num_tokens, head_dim)
        queries = queries.transpose(1, 2)
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)

        # Step 4: scores per head, (batch, num_heads, num_tokens, num_tokens)
        attn_scores = torch.matmul(queries, keys.transpose(-2, -1))

        # Step 5: hide the future
        current_mask = self.mask[:num_tokens, :num_tokens]
        masked_scores = attn_scores.masked_fill(current_mask, float("-inf"))

        # Step 6: scale, softmax, dropout
        scaling_factor = math.sqrt(self.head_dim)
        attn_weights = torch.softmax(torch.div(masked_scores, scaling_factor), dim=-1)
        attn_weights = self.dropout(attn_weights)

        # Step 7: weighted sum of the values, (batch, num_heads, num_tokens, head_dim)
        context_vecs = torch.matmul(attn_weights, values)

        # Step 8: merge the heads back, (batch, num_tokens, d_out)
        context_vecs = context_vecs.transpose(1, 2).reshape(batch_size, num_tokens, self.d_out)

        # Step 9: the output projection
        output = self.out_proj(context_vecs)
        return output


def build_gpt2_small_mha():
    # GPT-2 small: 768-dimensional embeddings, a context of 1024 tokens, 12 heads
    embedding_dim = 768
    context_length = 1024
    number_of_heads = 12
    mha = MultiHeadAttention(
        d_in=embedding_dim,
        d_out=embedding_dim,
        context_length=context_length,
        dropout=0.0,
        num_heads=number_of_heads,
        qkv_bias=False,
    )
    return mha


# ---- stage 8 (bonus) ----

def softmax_stable(x):
    # Step 1: each row's own maximum (not the maximum of the whole tensor)
    row_maximum = torch.max(x, dim=-1, keepdim=True).values
    # Step 2: shift, so that the largest exponent is exactly 0
    shifted = x - row_maximum
    # Step 3: the usual softmax on the shifted values
    numerator = torch.exp(shifted)
    denominator = torch.sum(numerator, dim=-1, keepdim=True)
    return numerator / denominator


class FusedQKVAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        future_mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        self.register_buffer("mask", future_mask)

    def forward(self, x):
        batch_size, num_tokens, d_in = x.shape

        # Step 1: one projection, then split into queries, keys, values (in this order)
        combined = self.qkv(x)  # (batch, num_tokens, 3 * d_out)
        queries, keys, values = torch.split(combined, self.d_out, dim=-1)

        # Step 2: split into heads and put the heads first
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = keys.reshape(batch_size, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = values.reshape(batch_size, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        # Step 3: the same attention as MultiHeadAttention
        attn_scores = torch.matmul(queries, keys.transpose(-2, -1))
        current_mask = self.mask[:num_tokens, :num_tokens].bool()
        masked_scores = attn_scores.masked_fill(current_mask, float("-inf"))
        scaling_factor = math.sqrt(self.head_dim)
        attn_weights = torch.softmax(torch.div(masked_scores, scaling_factor), dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vecs = torch.matmul(attn_weights, values)

        # Step 4: merge the heads, project
        context_vecs = context_vecs.transpose(1, 2).reshape(batch_size, num_tokens, self.d_out)
        output = self.proj(context_vecs)
        return output


def attn_weights_bytes(batch_size, num_heads=12, num_tokens=1024, bytes_per_value=4):
    # one (num_tokens x num_tokens) matrix per sequence and per head
    values_per_matrix = num_tokens * num_tokens
    number_of_matrices = batch_size * num_heads
    total_values = number_of_matrices * values_per_matrix
    total_bytes = total_values * bytes_per_value
    return int(total_bytes)


class SDPAMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout  # a probability: scaled_dot_product_attention does the dropout

    def forward(self, x):
        batch_size, num_tokens, d_in = x.shape

        # Step 1: project and split into heads, (batch, num_heads, num_tokens, head_dim)
        queries = self.W_query(x).reshape(batch_size, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).reshape(batch_size, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).reshape(batch_size, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        # Step 2: the fused kernel: scores, causal mask, softmax, dropout and the weighted sum
        if self.training:
            dropout_probability = self.dropout
        else:
            dropout_probability = 0.0
        context_vecs = F.scaled_dot_product_attention(
            queries, keys, values, dropout_p=dropout_probability, is_causal=True
        )

        # Step 3: merge the heads, project
        context_vecs = context_vecs.transpose(1, 2).reshape(batch_size, num_tokens, self.d_out)
        output = self.out_proj(context_vecs)
        return output
