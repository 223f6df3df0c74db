"""flash_attn_func on a CUDA device against float32 SDPA.  Marked `gpu`:
skipped where no CUDA device is usable (CI).  On the GPU machine,
scripts/gpu/run_gpu_api.sh runs them from the bundle; the broader sweep is
scripts/gpu/check_flash_attn_api.py."""

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
    generator = torch.Generator(device="cuda").manual_seed(seqlen)
    shape = (2, seqlen, 4, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", generator=generator).mul(0.5).to(dtype)
               .requires_grad_() for _ in range(3))
    dout = torch.randn(shape, device="cuda", generator=generator).to(dtype)
    out = flash_attn_func(q, k, v, causal=causal)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    want = reference(q, k, v, dout, causal)
    u = UNIT_ROUNDOFF[dtype]
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
