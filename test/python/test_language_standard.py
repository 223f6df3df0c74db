"""tile.language's compositions of other builtins (standard.py): clamp,
swizzle2d, softmax, argmax/argmin (tl.max/tl.min with return_indices),
div_rn, fdiv, sqrt_rn, umulhi, unsqueeze, squeeze, broadcast, assume, max_constancy, add/sub/mul and
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


@tile.jit
def indices_kernel(X, VALUES, FIRST_MAX, LAST_MAX, FIRST_MIN, DOWN, n_cols,
                   ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = cols[None, :] < n_cols
    x = tl.load(X + offs, mask=mask, other=float("-inf"))
    values, first = tl.max(x, 1, return_indices=True)
    tl.store(VALUES + rows, values)
    tl.store(FIRST_MAX + rows, first)
    tl.store(LAST_MAX + rows, tl.argmax(x, 1, tie_break_left=False))
    tl.store(FIRST_MIN + rows, tl.argmin(tl.where(mask, x, float("inf")), 1))
    # Down the columns, keeping the reduced dimension.
    down = tl.argmax(x, 0, keep_dims=True)
    tl.store(DOWN + cols[None, :], down, mask=mask)


def test_return_indices_argmax_argmin():
    torch.manual_seed(3)
    rows, n_cols = 8, 37                 # 37 columns in a block of 64
    x = torch.randn(rows, n_cols)
    x[1, 4] = x[1, 30] = x[1].max() + 1  # ties: first and last
    x[2, 6] = x[2, 9] = x[2].min() - 1
    x[5, 11] = float("nan")              # a NaN maximum: its index
    x[6, :] = 0.5                        # all equal
    values = torch.zeros(rows)
    first_max, last_max, first_min = (torch.zeros(rows, dtype=torch.int32) for _ in range(3))
    down = torch.zeros(n_cols, dtype=torch.int32)
    indices_kernel[(1,)](x, values, first_max, last_max, first_min, down, n_cols,
                         ROWS=rows, COLS=64)

    def first(row, value):
        return int(((row == value) | (row.isnan() & value.isnan())).nonzero()[0])

    def last(row, value):
        return int(((row == value) | (row.isnan() & value.isnan())).nonzero()[-1])

    for r in range(rows):
        top = x[r].max() if not x[r].isnan().any() else torch.tensor(float("nan"))
        assert first_max[r] == first(x[r], top), r
        assert last_max[r] == last(x[r], top), r
        assert first_min[r] == first(x[r], x[r].min()), r
        assert (values[r].isnan() and top.isnan()) or values[r] == top
    assert first_max[1] == 4 and last_max[1] == 30 and first_min[2] == 6
    assert first_max[5] == 11 and first_max[6] == 0 and last_max[6] == n_cols - 1
    column = x.clone()
    for c in range(n_cols):
        col = column[:, c]
        top = col.max() if not col.isnan().any() else torch.tensor(float("nan"))
        assert down[c] == first(col, top), c


@tile.jit
def indices_without_axis(X, I, N: tl.constexpr):
    _, index = tl.max(tl.load(X + tl.arange(0, N)), return_indices=True)
    tl.store(I, index)


def test_return_indices_without_an_axis_is_a_compile_error():
    from tile.compiler import compile_kernel
    from tile.compiler.errors import CompilationError
    with pytest.raises(CompilationError, match="return_indices needs a constexpr integer axis"):
        compile_kernel(indices_without_axis, "*fp32,*i32", {"N": 16})


@tile.jit
def math_kernel(X, Y, A, B, QUOTIENT, FDIV, ROOT, HIGH, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=1.0)
    y = tl.load(Y + offs, mask=mask, other=1.0)
    tl.store(QUOTIENT + offs, tl.div_rn(x, y), mask=mask)
    tl.store(FDIV + offs, tl.math.fdiv(x, y, ieee_rounding=True), mask=mask)
    tl.store(ROOT + offs, tl.sqrt_rn(tl.abs(x)), mask=mask)
    a = tl.load(A + offs, mask=mask, other=0)
    b = tl.load(B + offs, mask=mask, other=0)
    tl.store(HIGH + offs, tl.umulhi(a, b), mask=mask)


def test_div_rn_fdiv_sqrt_rn_umulhi():
    torch.manual_seed(4)
    n = 300
    x, y = torch.randn(n) * 100, torch.randn(n)
    a = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32)
    b = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32)
    a[:3] = torch.tensor([-2**31, 2**31 - 1, -1], dtype=torch.int32)
    b[:3] = torch.tensor([-2**31, 2**31 - 1, -1], dtype=torch.int32)
    quotient, fdiv, root = (torch.zeros(n) for _ in range(3))
    high = torch.zeros(n, dtype=torch.int32)
    math_kernel[(tile.cdiv(n, 128),)](x, y, a, b, quotient, fdiv, root, high, n, BLOCK=128)
    # Correctly rounded: the float64 result rounded once more to float32
    # (exact for / and sqrt: 53 >= 2 * 24 + 2 bits). torch's own float32
    # sqrt on the CPU is not always correctly rounded.
    assert torch.equal(quotient, (x.double() / y.double()).float())
    assert torch.equal(fdiv, (x.double() / y.double()).float())
    assert torch.equal(root, x.abs().double().sqrt().float())
    # The unsigned product's high word, as int32 bits (Triton's mulhiui).
    words = [((p & 0xFFFFFFFF) * (q & 0xFFFFFFFF)) >> 32
             for p, q in zip(a.tolist(), b.tolist())]
    want = [w - 2**32 if w >= 2**31 else w for w in words]
    assert high.tolist() == want


@tile.jit
def shapes_kernel(X, OUT, ROWS, n, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    tl.assume(n > 0)
    r, c = tl.broadcast(rows[:, None], cols[None, :])
    offs = tl.max_constancy(r * N + c, 1)
    x = tl.load(X + offs)
    tl.store(OUT + offs, x * 2)
    # A column kept with keep_dims, then squeezed back to a row.
    tl.store(ROWS + rows, tl.squeeze(tl.max(x, 1, keep_dims=True), 1))


def test_broadcast_squeeze_and_the_ignored_hints():
    torch.manual_seed(5)
    x = torch.randn(8, 16)
    out, rows = torch.zeros(8, 16), torch.zeros(8)
    shapes_kernel[(1,)](x, out, rows, 3, M=8, N=16)
    assert torch.equal(out, x * 2)
    assert torch.equal(rows, x.max(1).values)


@tile.jit
def squeeze_wrong_dim(X, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))[None, :]
    tl.store(X + tl.arange(0, N), tl.squeeze(x, 1))


@tile.jit
def assume_a_float(X, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.assume(x)


@pytest.mark.parametrize("kernel, message", [
    (squeeze_wrong_dim, r"tl.squeeze: dimension 1 of \[1, 16\] is not of length 1"),
    (assume_a_float, "tl.assume expects a boolean")])
def test_shape_errors(kernel, message):
    from tile.compiler import compile_kernel
    from tile.compiler.errors import CompilationError
    with pytest.raises(CompilationError, match=message):
        compile_kernel(kernel, "*fp32", {"N": 16})
