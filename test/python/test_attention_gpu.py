"""flash_attn_func on a CUDA device against float32 SDPA.  Marked `gpu`:
skipped where no CUDA device is usable (CI).  On the GPU machine,
test/gpu/run.sh (its part api) runs them from the bundle; the broader sweep
is test/gpu/check_flash_attn_api.py."""

import math

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

from tile.attention import flash_attn_func  # noqa: E402

# Normwise limits in units of the unit roundoff (docs/python-api.md).
UNIT_ROUNDOFF = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def relative_error(x, ref):
    """Normwise, with |ref| floored at an RMS of 1e-3: at N=1 the softmax is
    1 whatever the scores, so the exact dq and dk are zero."""
    floor = 1e-3 * math.sqrt(ref.numel())
    return ((x.double() - ref.double()).norm() / ref.double().norm().clamp_min(floor)).item()


def random_inputs(dtype, head_dim, seqlen):
    """q, k, v (requiring grad) and dout of shape (2, seqlen, 4, head_dim),
    seeded by seqlen."""
    generator = torch.Generator(device="cuda").manual_seed(seqlen)
    shape = (2, seqlen, 4, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", generator=generator).mul(0.5).to(dtype)
               .requires_grad_() for _ in range(3))
    dout = torch.randn(shape, device="cuda", generator=generator).to(dtype)
    return q, k, v, dout


def reference(q, k, v, dout, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (t.detach().float().requires_grad_() for t in (q, k, v))
    with sdpa_kernel([SDPBackend.MATH]):
        out = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
            is_causal=causal).transpose(1, 2)
    return (out, *torch.autograd.grad(out, (q, k, v), dout.float()))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seqlen", [1, 100, 257])
def test_forward_and_gradients_match_sdpa(dtype, head_dim, causal, seqlen):
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v, dout = random_inputs(dtype, head_dim, seqlen)
    out = flash_attn_func(q, k, v, causal=causal)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    want = reference(q, k, v, dout, causal)
    u = UNIT_ROUNDOFF[dtype]
    assert relative_error(out, want[0]) <= 4 * u
    for got, ref in zip(grads, want[1:]):
        assert relative_error(got, ref) <= 8 * u


@pytest.mark.parametrize("shape, causal", [((21846, 3, 5, 64), True),
                                            ((13200, 17, 5, 128), False)])
def test_more_programs_than_a_grid_holds(shape, causal):
    """batch x heads past the grid's 65535 rows runs in parts of the batch."""
    torch.backends.cuda.matmul.allow_tf32 = False
    generator = torch.Generator(device="cuda").manual_seed(shape[0])
    q, k, v = (torch.randn(shape, device="cuda", generator=generator).half()
               .requires_grad_() for _ in range(3))
    dout = torch.randn(shape, device="cuda", generator=generator).half()
    out = flash_attn_func(q, k, v, causal=causal)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    want = reference(q, k, v, dout, causal)
    u = UNIT_ROUNDOFF[torch.float16]
    assert relative_error(out, want[0]) <= 4 * u
    for got, ref in zip(grads, want[1:]):
        assert relative_error(got, ref) <= 8 * u


def test_lse_is_the_natural_log_sum_exp():
    q, k, v = (torch.randn(1, 77, 2, 64, device="cuda", dtype=torch.float16)
               for _ in range(3))
    _, lse = flash_attn_func(q, k, v, causal=True, return_lse=True)
    scores = torch.einsum("bnhd,bmhd->bhnm", q.float(), k.float()) / math.sqrt(64)
    scores = scores.masked_fill(
        torch.ones(77, 77, dtype=torch.bool, device="cuda").triu(1), -math.inf)
    torch.testing.assert_close(lse, torch.logsumexp(scores, -1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, head_dim, seqlen, causal_offset", [
    (torch.float16, 64, 257, -1), (torch.bfloat16, 128, 100, -37),
    (torch.float16, 128, 300, 45), (torch.bfloat16, 64, 50, -60)])
def test_causal_offset_matches_a_masked_reference(dtype, head_dim, seqlen, causal_offset):
    """Query i sees key j iff j <= i + causal_offset; rows that see no key
    (a prefix) give out 0, lse -inf and zero dq.  The reference runs SDPA
    with an explicit mask on the other rows only (a fully masked row would
    be NaN there)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v, dout = random_inputs(dtype, head_dim, seqlen)
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True,
                               causal_offset=causal_offset)
    grads = torch.autograd.grad(out, (q, k, v), dout)

    empty = min(seqlen, max(0, -causal_offset))
    visible = torch.ones(seqlen, seqlen, dtype=torch.bool, device="cuda").tril(causal_offset)
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    ref_out = torch.zeros_like(q32)
    if empty < seqlen:
        with sdpa_kernel([SDPBackend.MATH]):
            seen = torch.nn.functional.scaled_dot_product_attention(
                q32[:, empty:].transpose(1, 2), k32.transpose(1, 2), v32.transpose(1, 2),
                attn_mask=visible[empty:]).transpose(1, 2)
        ref_out = torch.cat([ref_out[:, :empty], seen], dim=1)
        ref_grads = torch.autograd.grad(ref_out, (q32, k32, v32), dout.float())
    else:
        ref_grads = (torch.zeros_like(q32),) * 3
    scores = torch.einsum("bnhd,bmhd->bhnm", q32.detach(), k32.detach()) / math.sqrt(head_dim)
    ref_lse = torch.logsumexp(scores.masked_fill(~visible, -math.inf), -1)

    assert torch.isneginf(lse[:, :, :empty]).all() and torch.isfinite(lse[:, :, empty:]).all()
    assert (out[:, :empty] == 0).all() and (grads[0][:, :empty] == 0).all()
    if empty < seqlen:
        torch.testing.assert_close(lse[:, :, empty:], ref_lse[:, :, empty:], rtol=1e-5,
                                   atol=1e-5)
    u = UNIT_ROUNDOFF[dtype]
    assert relative_error(out, ref_out) <= 4 * u
    for got, ref in zip(grads, ref_grads):
        assert relative_error(got, ref) <= 8 * u


def capture(step):
    """(graph, what step() returned in it): step run once on a side stream
    first, which loads the kernels' modules before the capture."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    return graph, captured


@pytest.mark.parametrize("dtype, head_dim, causal", [
    (torch.float16, 64, True), (torch.bfloat16, 128, False)])
def test_a_captured_cuda_graph_replays_forward_and_backward(dtype, head_dim, causal):
    """flash_attn_func launches on PyTorch's current stream and neither
    synchronises nor allocates outside PyTorch, so a forward + backward can
    be captured in a CUDA graph (the way to take the host's time off small
    shapes).  Replays on new inputs, copied into the captured tensors, must
    match the reference on those inputs."""
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v, dout = random_inputs(dtype, head_dim, 200)

    def step():
        out = flash_attn_func(q, k, v, causal=causal)
        return (out, *torch.autograd.grad(out, (q, k, v), dout))

    graph, captured = capture(step)

    u = UNIT_ROUNDOFF[dtype]
    for replay in range(2):
        fresh = random_inputs(dtype, head_dim, 300 + replay)
        with torch.no_grad():
            for static, new in zip((q, k, v, dout), fresh):
                static.copy_(new[:, :200])
        graph.replay()
        want = reference(q, k, v, dout, causal)
        assert relative_error(captured[0], want[0]) <= 4 * u
        for got, ref in zip(captured[1:], want[1:]):
            assert relative_error(got, ref) <= 8 * u


def test_a_captured_cuda_graph_draws_new_dropout_masks_each_replay():
    """Dropout's seeds come from torch.randint on PyTorch's CUDA generator,
    which a CUDA graph captures as it captures PyTorch's own random ops: a
    replay draws new masks (another out on the same inputs), each a mask
    of the kernels' (the backward finite and of the right shapes)."""
    q, k, v, dout = random_inputs(torch.float16, 64, 200)

    def step():
        out = flash_attn_func(q, k, v, 0.3, causal=True)
        return (out, *torch.autograd.grad(out, (q, k, v), dout))

    graph, captured = capture(step)
    outs = []
    for _ in range(2):
        graph.replay()
        torch.cuda.synchronize()
        assert all(bool(torch.isfinite(t).all()) for t in captured)
        outs.append(captured[0].clone())
    assert not torch.equal(outs[0], outs[1])
