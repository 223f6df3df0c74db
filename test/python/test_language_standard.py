"""tile.language's compositions of other builtins (standard.py): clamp,
swizzle2d, softmax, unsqueeze, add/sub/mul and
TRITON_MAX_TENSOR_NUMEL, launched on CPU tensors (the interpreter) against
references at sizes that are not multiples of the blocks."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


def swizzle2d_reference(i, j, size_i, size_j, size_g):
    """Triton's grouped order, from its definition: ids dealt out size_g
    rows at a time, each group read column by column."""
    linear = i * size_j + j
    group, within = divmod(linear, size_g * size_j)
    rows = min(size_i - group * size_g, size_g)
    return group * size_g + within % rows, within // rows


@tile.jit
def swizzle_kernel(I, J, size_i, size_j, size_g):
    pid = tl.program_id(0)
    i, j = tl.swizzle2d(pid // size_j, pid % size_j, size_i, size_j, size_g)
    tl.store(I + pid, i)
    tl.store(J + pid, j)


@pytest.mark.parametrize("size_i, size_j, size_g", [(7, 5, 2), (8, 3, 4), (5, 4, 8), (6, 6, 1)])
def test_swizzle2d_is_triton_grouped_order(size_i, size_j, size_g):
    n = size_i * size_j
    i, j = torch.zeros(n, dtype=torch.int32), torch.zeros(n, dtype=torch.int32)
    swizzle_kernel[(n,)](i, j, size_i, size_j, size_g)
    got = list(zip(i.tolist(), j.tolist()))
    want = [swizzle2d_reference(p // size_j, p % size_j, size_i, size_j, size_g)
            for p in range(n)]
    assert got == want
    assert sorted(got) == [(a, b) for a in range(size_i) for b in range(size_j)]


@tile.jit
def elementwise_kernel(X, Y, CLAMPED, SUM, DIFF, PROD, n, lo, hi, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= tl.TRITON_MAX_TENSOR_NUMEL)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(CLAMPED + offs, tl.clamp(x, lo, hi), mask=mask)
    tl.store(SUM + offs, tl.add(x, y), mask=mask)
    tl.store(DIFF + offs, tl.sub(x, y), mask=mask)
    tl.store(PROD + offs, tl.mul(x, y), mask=mask)


def test_clamp_and_arithmetic():
    torch.manual_seed(0)
    n = 300
    x, y = torch.randn(n), torch.randn(n)
    outs = [torch.full((n,), float("nan")) for _ in range(4)]
    elementwise_kernel[(tile.cdiv(n, 128),)](x, y, *outs, n, -0.5, 0.75, BLOCK=128)
    clamped, total, diff, prod = outs
    assert torch.equal(clamped, x.clamp(-0.5, 0.75))
    assert torch.equal(total, x + y)
    assert torch.equal(diff, x - y)
    assert torch.equal(prod, x * y)


@tile.jit
def rows_kernel(X, SOFTMAX_ROWS, SOFTMAX_COLS, n_cols,
                ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = tl.unsqueeze(cols, 0) < n_cols
    x = tl.load(X + offs, mask=mask, other=float("-inf"))
    tl.store(SOFTMAX_ROWS + offs, tl.softmax(x, 1), mask=mask)
    # Along the rows (dim 0, Triton's default), on every column loaded.
    tl.store(SOFTMAX_COLS + offs, tl.softmax(x), mask=mask)


def test_softmax_along_a_ragged_row_and_down_the_columns():
    torch.manual_seed(1)
    rows, n_cols = 8, 37                # 37 columns in a block of 64
    x = torch.randn(rows, n_cols) * 3
    soft_rows, soft_cols = torch.zeros(rows, n_cols), torch.zeros(rows, n_cols)
    rows_kernel[(1,)](x, soft_rows, soft_cols, n_cols, ROWS=rows, COLS=64)
    assert torch.allclose(soft_rows.double(), torch.softmax(x.double(), 1), atol=1e-6, rtol=0)
    assert torch.allclose(soft_cols.double(), torch.softmax(x.double(), 0), atol=1e-6, rtol=0)
