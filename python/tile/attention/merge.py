"""Merging partial attention results with the log-sum-exp.

Attention of a row over disjoint key sets K_1, ..., K_n gives partial
results (out_i, lse_i), out_i = softmax over K_i applied to V_i and lse_i =
log sum_{j in K_i} exp(s_j).  The result over the union is

    lse = log sum_i exp(lse_i)
    out = sum_i exp(lse_i - lse) * out_i

computed here relative to the row maximum, so nothing overflows.  A part
whose lse is -inf (the row saw none of its keys) has weight 0; a row with
every lse -inf gets out 0 and lse -inf, never NaN.

Layouts follow the kernels: out (batch, seqlen, heads, head_dim), lse
(batch, heads, seqlen).
"""

import torch


def accumulation_dtype(dtype):
    """float32 for half precision inputs; float64 stays float64."""
    return torch.promote_types(dtype, torch.float32)


def _lse_to_out_layout(lse):
    # (batch, heads, seqlen) -> (batch, seqlen, heads, 1), to weight out rows.
    return lse.transpose(1, 2).unsqueeze(-1)


def merge_two(out, lse, block_out, block_lse):
    """Merges block (block_out, block_lse) into (out, lse) and returns the
    merged pair in the accumulation dtype.  out/lse may be None (nothing
    merged yet)."""
    dtype = accumulation_dtype(block_out.dtype)
    block_out = block_out.to(dtype)
    block_lse = block_lse.to(dtype)
    if out is None:
        # A row that saw no key may carry garbage in out; its weight is 0.
        empty = torch.isneginf(block_lse)
        return (block_out.masked_fill(_lse_to_out_layout(empty), 0.0),
                block_lse.clone())
    if out.shape != block_out.shape or lse.shape != block_lse.shape:
        raise ValueError(f"cannot merge a block of shape {tuple(block_out.shape)} "
                         f"(lse {tuple(block_lse.shape)}) into {tuple(out.shape)} "
                         f"(lse {tuple(lse.shape)})")
    return merge_parts([out, block_out], [lse, block_lse])


def merge_parts(outs, lses):
    """Merges any number of partial results (lists of out and lse over
    disjoint key sets) into (out, lse) in the accumulation dtype."""
    if len(outs) != len(lses) or not outs:
        raise ValueError("merge_parts needs as many outs as lses, at least one")
    dtype = accumulation_dtype(outs[0].dtype)
    lse_stack = torch.stack([x.to(dtype) for x in lses])
    row_max = lse_stack.max(dim=0).values
    # All parts -inf: subtract 0 instead of -inf, so exp gives 0, not NaN.
    safe_max = torch.where(torch.isneginf(row_max), torch.zeros_like(row_max), row_max)
    total = torch.exp(lse_stack - safe_max).sum(dim=0)
    lse = safe_max + torch.log(total)      # log(0) = -inf for empty rows
    safe_lse = torch.where(torch.isneginf(lse), torch.zeros_like(lse), lse)
    out = None
    for part_out, part_lse in zip(outs, lse_stack):
        weight = _lse_to_out_layout(torch.exp(part_lse - safe_lse))
        # where(), not a product: a part with weight 0 may hold NaN or inf.
        term = torch.where(weight > 0, weight * part_out.to(dtype), 0.0)
        out = term if out is None else out + term
    return out, lse
