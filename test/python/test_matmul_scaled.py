"""The fp8 GEMM (python/tile/kernels/matmul.py:matmul_scaled) on the
interpreter, launched from PyTorch on CPU tensors: C = (A @ B) * a_scale *
b_scale in bf16, B passed as its [N, K] transpose, against the float64
product of the same fp8 inputs at shapes that cross the blocks along M, N
and K, rows padded to 16 elements; C's padding stays unwritten. (On the
GPU: test/gpu/check_scaled_matmul.py.)"""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
from tile.kernels import manifest  # noqa: E402
from tile.kernels.matmul import matmul_scaled  # noqa: E402

DTYPES = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}
SMALL_BLOCKS = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2}

pytestmark = pytest.mark.usefixtures("launcher_tools")


def padded(rows, cols, dtype, generator, fill=None):
    width = -(-cols // 16) * 16
    if fill is not None:
        return torch.full((rows, width + 16), fill, dtype=dtype)
    return torch.randn(rows, width, generator=generator).to(dtype)[:, :cols]


def check(t, m, n, k, blocks):
    generator = torch.Generator().manual_seed(m * n + k)
    a = padded(m, k, DTYPES[t], generator)
    bt = padded(n, k, DTYPES[t], generator)
    c = padded(m, n, torch.bfloat16, generator, fill=float("nan"))
    scale_a, scale_b = torch.tensor([0.5]), torch.tensor([0.125])
    grid = (tile.cdiv(m, blocks["BLOCK_M"]) * tile.cdiv(n, blocks["BLOCK_N"]),)
    matmul_scaled[grid](a, bt, c, scale_a, scale_b, m, n, k, a.stride(0), bt.stride(0),
                        c.stride(0), **blocks)
    reference = (a.double() @ bt.double().T) * 0.0625
    magnitude = (a.double().abs() @ bt.double().abs().T) * 0.0625
    # Exact fp8 products summed in fp32, one rounding to bf16.
    error = (c[:, :n].double() - reference).abs()
    assert (error <= 2.0**-8 * magnitude + 1e-30).all(), \
        f"{t} {m}x{n}x{k}: worst {(error / magnitude).max().item():.3e} of |A||B|"
    assert c[:, n:].isnan().all(), "wrote past N"


@pytest.mark.parametrize("t", sorted(DTYPES))
@pytest.mark.parametrize("m, n, k", [(70, 50, 45), (33, 65, 17), (64, 64, 64), (5, 3, 1)])
def test_small_blocks(t, m, n, k):
    check(t, m, n, k, SMALL_BLOCKS)


def test_shipped_blocks():
    """The variant as shipped, on a shape that crosses its blocks."""
    c = manifest.BY_NAME["matmul_scaled_fp8e4nv"].constexprs
    check("fp8e4nv", c["BLOCK_M"] + 3, c["BLOCK_N"] + 5, c["BLOCK_K"] + 9,
          {name: c[name] for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")})
