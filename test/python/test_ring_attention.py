"""Ring, striped and step attention on CPU: the whole distributed algorithm
(gloo P2P, LSE merge, skipped causal blocks, dK/dV rotation) with a float64
pure-torch block that keeps the contract of Tile's per-block kernels."""

import math
import os
import tempfile

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from tile.attention import Attention, AttentionType, ring  # noqa: E402

# --------------------------------------------------------------------------
# Reference block: the contract of functional._flash_attn_forward/_backward
# --------------------------------------------------------------------------

def _scores(q, k, causal, scale, causal_offset=0):
    """Scaled scores (b, h, n, m); with causal, key j is hidden from query i
    iff j > i + causal_offset."""
    scores = torch.einsum("bnhd,bmhd->bhnm", q, k) * scale
    if causal:
        n, m = scores.shape[-2:]
        hidden = torch.ones(n, m, dtype=torch.bool).triu(1 + causal_offset)
        scores = scores.masked_fill(hidden, -math.inf)
    return scores


def _probabilities(scores, lse):
    """exp(scores - lse), with 0 (not exp(-inf + inf) = NaN) in rows whose
    lse is -inf: they see no key."""
    safe = torch.where(torch.isneginf(lse), torch.zeros_like(lse), lse)
    return torch.exp(scores - safe[..., None])


def _check_square(q, k, v):
    # Tile's kernels take as many keys as queries: so must the reference,
    # or the tests would pass with blocks the kernels refuse.
    assert q.shape == k.shape == v.shape, (q.shape, k.shape, v.shape)


def reference_block_forward(q, k, v, causal, scale, causal_offset):
    """(out, lse): out like q, lse (batch, heads, seqlen); a row that sees no
    key gets out 0 and lse -inf (logsumexp of nothing)."""
    _check_square(q, k, v)
    scores = _scores(q, k, causal, scale, causal_offset)
    lse = torch.logsumexp(scores, -1)
    out = torch.einsum("bhnm,bmhd->bnhd", _probabilities(scores, lse), v)
    return out.to(q.dtype), lse


def reference_block_backward(dout, q, k, v, out, lse, causal, scale, causal_offset):
    """As the kernels: P from the given lse, delta = rowsum(out * dout) from
    the given (merged) out; dq and dk with the scale applied."""
    _check_square(q, k, v)
    p = _probabilities(_scores(q, k, causal, scale, causal_offset), lse)
    delta = (out * dout).sum(-1).transpose(1, 2)             # (b, h, n)
    dp = torch.einsum("bnhd,bmhd->bhnm", dout, v)
    ds = p * (dp - delta[..., None])
    dq = torch.einsum("bhnm,bmhd->bnhd", ds, k) * scale
    dk = torch.einsum("bhnm,bnhd->bmhd", ds, q) * scale
    dv = torch.einsum("bhnm,bnhd->bmhd", p, dout)
    return dq, dk, dv


def full_attention(q, k, v, causal, scale):
    probs = torch.softmax(_scores(q, k, causal, scale), -1)
    return torch.einsum("bhnm,bmhd->bnhd", probs, v)


FUNCTIONS = {ring.RING: ring.ring_attn_func, ring.STRIPED: ring.striped_attn_func,
             ring.STEP: ring.step_attn_func}


def _check_all(rank, world_size):
    """Every layout, causal and not, forward and backward, against
    single-process float64 autograd."""
    batch, heads, head_dim, scale = 2, 3, 8, 0.3
    # Local lengths: odd where the layout allows; step needs an even one.
    # Striped with one token per rank: the offset -1 blocks see no key.
    cases = [(ring.RING, 5), (ring.STRIPED, 7), (ring.STRIPED, 1), (ring.STEP, 6)]
    for layout, local in cases:
        function = FUNCTIONS[layout]
        for causal in (False, True):
            n = local * world_size
            generator = torch.Generator().manual_seed(1234)
            q, k, v, dout = (torch.randn(batch, n, heads, head_dim, dtype=torch.float64,
                                         generator=generator) for _ in range(4))
            q, k, v = (x.requires_grad_() for x in (q, k, v))
            want = full_attention(q, k, v, causal, scale)
            want.backward(dout)

            def shard(x, layout=layout):
                return ring.shard_sequence(x.detach(), layout, rank, world_size)

            q_l, k_l, v_l = (shard(x).clone().requires_grad_() for x in (q, k, v))
            out = function(q_l, k_l, v_l, causal=causal, softmax_scale=scale,
                           block_forward=reference_block_forward,
                           block_backward=reference_block_backward)
            out.backward(shard(dout))
            what = f"{layout} N={n} causal={causal} rank {rank}/{world_size}"
            for name, got, expected in [("out", out, want), ("dq", q_l.grad, q.grad),
                                        ("dk", k_l.grad, k.grad),
                                        ("dv", v_l.grad, v.grad)]:
                torch.testing.assert_close(got.detach(), shard(expected), rtol=1e-9, atol=1e-9,
                                           msg=lambda m, case=f"{what} {name}": f"{case}: {m}")
            # Ranks leave the round together, so that no two rounds overlap.
            dist.barrier()


def _check_subgroup(rank, world_size):
    """Ring attention over the odd ranks only: group ranks are not global
    ranks (P2P peers are translated)."""
    members = list(range(1, world_size, 2))
    group = dist.new_group(members)            # every rank must call it
    if rank in members:
        group_rank, size, scale = members.index(rank), len(members), 0.25
        generator = torch.Generator().manual_seed(7)
        q, k, v, dout = (torch.randn(1, 3 * size, 2, 4, dtype=torch.float64,
                                     generator=generator) for _ in range(4))
        q, k, v = (x.requires_grad_() for x in (q, k, v))
        full_attention(q, k, v, True, scale).backward(dout)

        def shard(x):
            return ring.shard_sequence(x.detach(), "ring", group_rank, size)

        q_l, k_l, v_l = (shard(x).clone().requires_grad_() for x in (q, k, v))
        out = ring.ring_attn_func(q_l, k_l, v_l, causal=True, softmax_scale=scale,
                                  group=group, block_forward=reference_block_forward,
                                  block_backward=reference_block_backward)
        out.backward(shard(dout))
        for got, expected in [(k_l.grad, k.grad), (v_l.grad, v.grad), (q_l.grad, q.grad)]:
            torch.testing.assert_close(got, shard(expected), rtol=1e-9, atol=1e-9)
    dist.barrier()


def _worker(rank, world_size, init_file):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world_size)
    try:
        torch.set_num_threads(1)
        _check_all(rank, world_size)
        if world_size == 4:
            _check_subgroup(rank, world_size)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world_size", [2, 4])
def test_sequence_parallel_matches_full_attention(world_size):
    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(_worker, args=(world_size, os.path.join(folder, "init")),
                 nprocs=world_size, join=True)


# --------------------------------------------------------------------------
# Single process: errors and layouts
# --------------------------------------------------------------------------

def test_striped_blocks_take_a_causal_offset():
    # Key rank after the query rank: local key j is visible iff j <= i - 1.
    for seqlen in (1, 7):
        assert ring._blocks(ring.STRIPED, True, 1, 0, seqlen) == [
            (ring._ALL, ring._ALL, True, 0)]
        assert ring._blocks(ring.STRIPED, True, 1, 1, seqlen) == [
            (ring._ALL, ring._ALL, True, 0)]
        assert ring._blocks(ring.STRIPED, True, 1, 2, seqlen) == [
            (ring._ALL, ring._ALL, True, -1)]
    assert ring._blocks(ring.STRIPED, False, 0, 3, 7) == [(ring._ALL, ring._ALL, False, 0)]


@pytest.mark.parametrize("causal_offset", [-7, -3, -1, 0, 2, 9])
def test_reference_block_with_a_causal_offset(causal_offset):
    """The CPU block keeps the kernels' contract for any offset: row i sees
    keys j <= i + offset; a row with none gets out 0, lse -inf and zero
    gradients, never NaN."""
    generator = torch.Generator().manual_seed(3)
    q, k, v, dout = (torch.randn(1, 6, 2, 4, dtype=torch.float64, generator=generator)
                     for _ in range(4))
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    out, lse = reference_block_forward(q, k, v, True, 0.5, causal_offset)
    # Row by row: softmax over the visible keys, or nothing.
    rows, lses = [], []
    for i in range(6):
        visible = max(0, min(6, i + causal_offset + 1))
        if visible == 0:
            rows.append(0 * q[:, i])                 # zero, and in the graph
            lses.append(torch.full((1, 2), -math.inf, dtype=torch.float64))
            continue
        scores = torch.einsum("bhd,bmhd->bhm", q[:, i], k[:, :visible]) * 0.5
        rows.append(torch.einsum("bhm,bmhd->bhd", torch.softmax(scores, -1), v[:, :visible]))
        lses.append(torch.logsumexp(scores, -1))
    want = torch.stack(rows, 1)
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(lse, torch.stack(lses, -1), rtol=1e-12, atol=1e-12)
    empty = max(0, min(6, -causal_offset))
    assert torch.isneginf(lse[:, :, :empty]).all() and (out[:, :empty] == 0).all()

    grads = torch.autograd.grad(want, (q, k, v), dout, allow_unused=True,
                                materialize_grads=True)
    got = reference_block_backward(dout, q.detach(), k.detach(), v.detach(), out.detach(),
                                   lse.detach(), True, 0.5, causal_offset)
    for name, g, w in zip(("dq", "dk", "dv"), got, grads):
        assert not torch.isnan(g).any(), name
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12, msg=name)
    assert (got[0][:, :empty] == 0).all()


def test_shard_sequence_layouts():
    x = torch.arange(8).view(1, 8, 1, 1)

    def tokens(layout, r):
        return ring.shard_sequence(x, layout, r, 2).flatten().tolist()

    assert tokens("ring", 1) == [4, 5, 6, 7]
    assert tokens("striped", 1) == [1, 3, 5, 7]
    assert tokens("step", 0) == [0, 1, 6, 7]
    assert tokens("step", 1) == [2, 3, 4, 5]
    with pytest.raises(ValueError, match="not a multiple of 4 chunks"):
        ring.shard_sequence(torch.zeros(1, 6, 1, 1), "step", 0, 2)
    with pytest.raises(ValueError, match="unknown layout"):
        ring.shard_sequence(x, "spiral", 0, 2)


def test_needs_an_initialised_process_group():
    q = torch.randn(1, 4, 2, 8)
    for function in FUNCTIONS.values():
        with pytest.raises(RuntimeError, match="init_process_group"):
            function(q, q, q)
    layer = Attention(16, 2, attention_type=AttentionType.RING)
    with pytest.raises(RuntimeError, match="ring attention needs torch.distributed"):
        layer(torch.randn(1, 4, 16))


@pytest.fixture
def single_process_group():
    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group("gloo", init_method=f"file://{folder}/init", rank=0,
                                world_size=1)
        try:
            yield
        finally:
            dist.destroy_process_group()


def test_bad_inputs_are_refused(single_process_group):
    q = torch.randn(1, 4, 2, 8, dtype=torch.float64)
    with pytest.raises(ValueError, match="q and k must have one shape"):
        ring.ring_attn_func(q, q[:, :3], q)
    with pytest.raises(ValueError, match="q and v must have one shape, dtype"):
        ring.ring_attn_func(q, q, q.float())
    with pytest.raises(ValueError, match="4 dimensions"):
        ring.striped_attn_func(q[0], q[0], q[0])
    with pytest.raises(ValueError, match="local sequence length must be even, not 3"):
        ring.step_attn_func(q[:, :3], q[:, :3], q[:, :3])
    with pytest.raises(TypeError, match="causal must be True or False"):
        ring.ring_attn_func(q, q, q, causal=1)


def test_one_rank_and_the_module(single_process_group, monkeypatch):
    """World size 1 is plain attention; the Attention module reaches the
    registered sequence-parallel functions with its process group."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 5, 2, 8, dtype=torch.float64) for _ in range(3))
    out = ring.ring_attn_func(q, k, v, causal=True, softmax_scale=0.5,
                              block_forward=reference_block_forward,
                              block_backward=reference_block_backward)
    torch.testing.assert_close(out, full_attention(q, k, v, True, 0.5))
    monkeypatch.setattr(ring, "_default_blocks",
                        lambda: (reference_block_forward, reference_block_backward))
    for kind in ("ring", "striped", "step"):
        torch.manual_seed(0)
        layer = Attention(16, 2, causal=True, attention_type=kind, dtype=torch.float64)
        torch.manual_seed(0)
        sdpa = Attention(16, 2, causal=True, attention_type="sdpa", dtype=torch.float64)
        x = torch.randn(1, 6, 16, dtype=torch.float64)
        torch.testing.assert_close(layer(x), sdpa(x))
