"""The fp8 attention forward (python/tile/kernels/attention.py:attn_fwd_fp8)
on the interpreter, launched from PyTorch on CPU tensors: e4m3 Q, K and V
(V transposed) with per-tensor descale factors, against the float64
attention of the descaled inputs, at lengths that are not multiples of the
blocks. P is rounded to e4m3 (relative error 2^-4) before P V, so O may be
off by 2^-4 of max|V|, plus its rounding to bf16; the LSE comes from f32
scores of exact fp8 products. (On the GPU: test/gpu/check_fp8_attention.py.)"""

import math

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
from tile.kernels.attention import attn_fwd_fp8  # noqa: E402

DESCALE = (0.5, 0.25, 2.0)

pytestmark = pytest.mark.usefixtures("launcher_tools")


def fp8_attention(z, h, n, d, block_m, block_n, seed):
    """(O, LSE, float64 O, float64 LSE) of one run."""
    generator = torch.Generator().manual_seed(seed)
    fp8 = torch.float8_e4m3fn
    q = (torch.randn(z, h, n, d, generator=generator) * 2).to(fp8)
    k = (torch.randn(z, h, n, d, generator=generator) * 2).to(fp8)
    width = -(-n // 16) * 16          # VT's rows: 16-element multiples
    vt = torch.randn(z, h, d, width, generator=generator).to(fp8)[..., :n]
    o = torch.full((z, h, n, d), float("nan"), dtype=torch.bfloat16)
    lse = torch.empty(z * h * n)
    descale = torch.tensor(DESCALE)
    sm_scale = 1 / math.sqrt(d)
    grid = (tile.cdiv(n, block_m), z * h)
    attn_fwd_fp8[grid](q, k, vt, o, lse, descale, sm_scale, *q.stride()[:3],
                       *vt.stride()[:3], *o.stride()[:3], z, h, n,
                       HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    q64, k64 = q.double() * DESCALE[0], k.double() * DESCALE[1]
    v64 = vt.double().transpose(-1, -2) * DESCALE[2]
    scores = q64 @ k64.transpose(-1, -2) * sm_scale
    lse_ref = torch.logsumexp(scores, -1)
    o_ref = torch.softmax(scores, -1) @ v64
    return o.double(), lse.view(z, h, n).double(), o_ref, lse_ref, v64.abs().max()


@pytest.mark.parametrize("n, d, block_m, block_n", [(100, 64, 32, 16), (37, 32, 16, 16),
                                                     (130, 128, 64, 32)])
def test_matches_float64(n, d, block_m, block_n):
    o, lse, o_ref, lse_ref, v_max = fp8_attention(2, 3, n, d, block_m, block_n, seed=n + d)
    bound = 2.0**-4 * v_max + 2.0**-8 * o_ref.abs()
    assert ((o - o_ref).abs() <= bound).all(), \
        f"O: worst {((o - o_ref).abs() / bound).max().item():.3f} of the bound"
    assert torch.allclose(lse, lse_ref, rtol=1e-5, atol=1e-4), \
        f"LSE: max error {(lse - lse_ref).abs().max().item():.3e}"
