"""Sequence-parallel attention over torch.distributed: ring, striped and
step (load-balanced) attention.

Each rank of a process group holds a shard (batch, seqlen_local, heads,
head_dim) of q, k and v.  K/V blocks travel around the ring (rank r sends to
r + 1 and receives from r - 1) with torch.distributed P2P; the transfer of
the next block is posted before the current block is computed, so the two
overlap.  Each rank merges its per-block (out, lse) with the log-sum-exp
(merge.py).  The backward rotates K/V again, together with dK/dV
accumulators that end on the rank owning the shard.

Layouts (W ranks, rank r, global sequence of N tokens):
  ring     rank r holds tokens [r * N/W, (r + 1) * N/W).
  striped  rank r holds tokens r, r + W, r + 2W, ...
  step     the sequence is cut into 2W chunks; rank r holds chunk r then
           chunk 2W - 1 - r, so every rank has the same causal work.
`shard_sequence` cuts a full tensor into a rank's shard for each layout.

Per-block attention is pluggable: block_forward(q, k, v, causal, scale,
causal_offset) -> (out, lse) and block_backward(dout, q, k, v, out, lse,
causal, scale, causal_offset) -> (dq, dk, dv), the contract of
functional._flash_attn_forward / _flash_attn_backward: with causal, query i
sees key j iff j <= i + causal_offset; lse (batch, heads, seqlen), natural
log, -inf (with out 0) for a row that sees no key of the block; the
gradients are the true gradients, the softmax scale already applied.
"""

import torch
import torch.distributed as dist

from . import merge as _merge

RING, STRIPED, STEP = "ring", "striped", "step"
_LAYOUTS = (RING, STRIPED, STEP)

_ALL = slice(None)


# --------------------------------------------------------------------------
# Layouts: which (query rows, key rows, causal, offset) blocks a pair of
# ranks needs
# --------------------------------------------------------------------------

def shard_sequence(x, layout, rank, world_size, dim=1):
    """Rank `rank`'s shard of the full tensor `x` (sequence along `dim`)."""
    layout = _check_layout(layout)
    n = x.shape[dim]
    if layout == STRIPED:
        return x[(_ALL,) * dim + (slice(rank, None, world_size),)]
    chunks = world_size if layout == RING else 2 * world_size
    if n % chunks:
        raise ValueError(f"{layout} layout: sequence length {n} is not a multiple of "
                         f"{chunks} chunks")
    parts = x.chunk(chunks, dim=dim)
    if layout == RING:
        return parts[rank]
    return torch.cat([parts[rank], parts[2 * world_size - 1 - rank]], dim=dim)


def _blocks(layout, causal, q_rank, k_rank, seqlen):
    """The attention blocks that queries of q_rank need from the K/V shard of
    k_rank: a list of (query slice, key slice, causal, causal offset)."""
    if not causal:
        return [(_ALL, _ALL, False, 0)]
    if layout == RING:
        if k_rank > q_rank:
            return []                                   # all in the future
        return [(_ALL, _ALL, k_rank == q_rank, 0)]
    if layout == STRIPED:
        # Local i, j are global i*W + q_rank, j*W + k_rank: for k_rank <=
        # q_rank key j is visible iff j <= i, else iff j <= i - 1 (local
        # query row 0 then sees no key of the block: lse -inf, weight 0).
        return [(_ALL, _ALL, True, 0 if k_rank <= q_rank else -1)]
    # STEP: local rows are [chunk q_rank; chunk 2W-1-q_rank]. The kernels
    # take blocks with as many keys as queries: chunk against chunk.
    half = seqlen // 2
    first, second = slice(0, half), slice(half, None)
    if k_rank == q_rank:
        return [(_ALL, _ALL, True, 0)]   # the two chunks are in global order
    if k_rank < q_rank:
        # Chunk k_rank is before both query chunks.
        return [(first, first, False, 0), (second, first, False, 0)]
    # Only the late query chunk sees them, both.
    return [(second, first, False, 0), (second, second, False, 0)]


def _check_layout(layout):
    if layout not in _LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}: choose one of {', '.join(_LAYOUTS)}")
    return layout


# --------------------------------------------------------------------------
# Communication
# --------------------------------------------------------------------------

class _Ring:
    """The ranks of a group and their neighbours, and non-blocking sends of
    a tensor to the next rank while receiving one from the previous."""

    def __init__(self, group):
        self.group = group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        # P2POp takes global ranks.
        self.next = self._global((self.rank + 1) % self.world_size)
        self.prev = self._global((self.rank - 1) % self.world_size)

    def _global(self, group_rank):
        if self.group is None:
            return group_rank
        return dist.get_global_rank(self.group, group_rank)

    def shift(self, tensor, tag=0):
        """Posts send(tensor -> next) and recv(prev); returns a function that
        waits and returns the received tensor.  K/V and dK/dV transfers may
        be in flight together: they use different tags (gloo matches by tag;
        NCCL keeps the order of posting)."""
        received = torch.empty_like(tensor)
        ops = [dist.P2POp(dist.isend, tensor, self.next, self.group, tag),
               dist.P2POp(dist.irecv, received, self.prev, self.group, tag)]
        requests = dist.batch_isend_irecv(ops)

        def wait():
            for request in requests:
                request.wait()
            return received
        return wait


# --------------------------------------------------------------------------
# Forward and backward
# --------------------------------------------------------------------------

def _ring_forward(ring, layout, q, k, v, causal, scale, block_forward):
    batch, seqlen, heads, head_dim = q.shape
    acc = _merge.accumulation_dtype(q.dtype)
    out = torch.zeros(batch, seqlen, heads, head_dim, dtype=acc, device=q.device)
    lse = torch.full((batch, heads, seqlen), float("-inf"), dtype=acc, device=q.device)
    kv = torch.stack([k, v]).contiguous()
    for step in range(ring.world_size):
        # Post the next block's transfer before computing on this one.
        pending = ring.shift(kv) if step + 1 < ring.world_size else None
        k_rank = (ring.rank - step) % ring.world_size
        for rows, cols, block_causal, offset in _blocks(layout, causal, ring.rank, k_rank,
                                                        seqlen):
            block_out, block_lse = block_forward(q[:, rows], kv[0][:, cols], kv[1][:, cols],
                                                 block_causal, scale, offset)
            merged_out, merged_lse = _merge.merge_parts(
                [out[:, rows], block_out], [lse[:, :, rows], block_lse])
            out[:, rows] = merged_out
            lse[:, :, rows] = merged_lse
        if pending is not None:
            kv = pending()
    return out, lse


def _ring_backward(ring, layout, dout, q, k, v, out, lse, causal, scale, block_backward):
    seqlen = q.shape[1]
    acc = _merge.accumulation_dtype(q.dtype)
    dq = torch.zeros(q.shape, dtype=acc, device=q.device)
    # dK/dV of the K/V block held now; it travels with the block and is
    # home after world_size shifts.
    dkv = torch.zeros((2,) + k.shape, dtype=acc, device=q.device)
    kv = torch.stack([k, v]).contiguous()
    pending_dkv = None
    for step in range(ring.world_size):
        pending_kv = ring.shift(kv) if step + 1 < ring.world_size else None
        k_rank = (ring.rank - step) % ring.world_size
        grads = []
        for rows, cols, block_causal, offset in _blocks(layout, causal, ring.rank, k_rank,
                                                        seqlen):
            dq_b, dk_b, dv_b = block_backward(dout[:, rows], q[:, rows], kv[0][:, cols],
                                              kv[1][:, cols], out[:, rows],
                                              lse[:, :, rows], block_causal, scale, offset)
            dq[:, rows] += dq_b.to(acc)
            grads.append((cols, dk_b, dv_b))
        if pending_dkv is not None:
            dkv = pending_dkv()           # this block's accumulator, from prev
        for cols, dk_b, dv_b in grads:
            dkv[0][:, cols] += dk_b.to(acc)
            dkv[1][:, cols] += dv_b.to(acc)
        pending_dkv = ring.shift(dkv, tag=1) if ring.world_size > 1 else None
        if pending_kv is not None:
            kv = pending_kv()
    if pending_dkv is not None:
        dkv = pending_dkv()               # our own shard's gradients
    return dq.to(q.dtype), dkv[0].to(k.dtype), dkv[1].to(v.dtype)


class RingAttnFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, scale, group, layout, block_forward, block_backward):
        ring = _Ring(group)
        out, lse = _ring_forward(ring, layout, q, k, v, causal, scale, block_forward)
        # The block backward takes out in q's dtype and the merged lse.
        out = out.to(q.dtype)
        lse = lse.to(torch.promote_types(q.dtype, torch.float32))
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.ring, ctx.layout, ctx.causal, ctx.scale = ring, layout, causal, scale
        ctx.block_backward = block_backward
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = _ring_backward(ctx.ring, ctx.layout, dout.contiguous(), q, k, v, out,
                                    lse, ctx.causal, ctx.scale, ctx.block_backward)
        return dq, dk, dv, None, None, None, None, None, None


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------

def _check_inputs(q, k, v, layout, causal, softmax_scale, group):
    from . import functional
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError(f"{layout} attention needs torch.distributed: call "
                           f"torch.distributed.init_process_group first")
    named = [("q", q), ("k", k), ("v", v)]
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name} must have 4 dimensions (batch, seqlen_local, "
                             f"heads, head_dim), but its shape is {tuple(t.shape)}")
    for name, t in named[1:]:
        if t.shape != q.shape or t.dtype != q.dtype or t.device != q.device:
            raise ValueError(f"q and {name} must have one shape, dtype and device: q is "
                             f"{tuple(q.shape)} {q.dtype} on {q.device}, {name} is "
                             f"{tuple(t.shape)} {t.dtype} on {t.device}")
    if layout == STEP and q.shape[1] % 2:
        raise ValueError(f"step attention: each rank holds two equal chunks, so the local "
                         f"sequence length must be even, not {q.shape[1]}")
    causal = functional._check_flag("causal", causal)
    scale = functional._softmax_scale(softmax_scale, q.shape[-1])
    return causal, scale


def _default_blocks():
    """Tile's per-block kernels (imported here: they need the bundle only
    when called)."""
    from .functional import _flash_attn_backward, _flash_attn_forward
    return _flash_attn_forward, _flash_attn_backward


def _sequence_parallel(layout, q, k, v, causal, softmax_scale, group, block_forward,
                       block_backward):
    causal, scale = _check_inputs(q, k, v, layout, causal, softmax_scale, group)
    if block_forward is None or block_backward is None:
        default_forward, default_backward = _default_blocks()
        block_forward = block_forward or default_forward
        block_backward = block_backward or default_backward
    return RingAttnFunction.apply(q, k, v, causal, scale, group, layout, block_forward,
                                  block_backward)


def ring_attn_func(q, k, v, causal=False, softmax_scale=None, group=None,
                   block_forward=None, block_backward=None):
    """Ring attention: rank r of `group` holds the contiguous shard r of the
    sequence, q, k, v (batch, seqlen_local, heads, head_dim) of one shape.
    Returns this rank's out shard; differentiable in q, k, v.  Causal: key
    blocks of later ranks are skipped.  block_forward/block_backward default
    to Tile's kernels (functional._flash_attn_forward/_backward)."""
    return _sequence_parallel(RING, q, k, v, causal, softmax_scale, group,
                              block_forward, block_backward)


def striped_attn_func(q, k, v, causal=False, softmax_scale=None, group=None,
                      block_forward=None, block_backward=None):
    """Striped attention: rank r holds tokens r, r + W, r + 2W, ... (W ranks).
    Otherwise as ring_attn_func."""
    return _sequence_parallel(STRIPED, q, k, v, causal, softmax_scale, group,
                              block_forward, block_backward)


def step_attn_func(q, k, v, causal=False, softmax_scale=None, group=None,
                   block_forward=None, block_backward=None):
    """Load-balanced ring attention: the sequence is cut into 2W chunks and
    rank r holds chunk r followed by chunk 2W - 1 - r (even local length).
    Otherwise as ring_attn_func."""
    return _sequence_parallel(STEP, q, k, v, causal, softmax_scale, group,
                              block_forward, block_backward)


def _module_adapter(function):
    def attend(q, k, v, causal, softmax_scale, process_group=None, dropout_p=0.0,
               **options):
        if dropout_p:
            raise NotImplementedError(f"{function.__name__} has no dropout: build the "
                                      f"Attention module with dropout=0.0")
        return function(q, k, v, causal=causal, softmax_scale=softmax_scale,
                        group=process_group, **options)
    attend.__name__ = function.__name__
    attend.__doc__ = f"Attention-module entry point of {function.__name__}."
    return attend


ring_attention = _module_adapter(ring_attn_func)
striped_attention = _module_adapter(striped_attn_func)
step_attention = _module_adapter(step_attn_func)
