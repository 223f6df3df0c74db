"""tl.reshape (tl.view, tl.ravel), tl.join, tl.split, tl.interleave and
tl.cat, and tl.sort, tl.topk, tl.flip and tl.bitonic_merge built on them,
in kernels launched on CPU tensors (the interpreter), against numpy and
torch, and the frontend's errors. The GPU lowering (registers renumbered where
elements stay in their threads, else shared memory) is checked by
test/Conversion/convert-tilegpu-to-llvm.mlir and, on a GPU, by
test/gpu/check_jit_launch.py."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def shape_ops(X, Y, FLAT, VIEW, PAIRS, HALVES, MIXED, ROWS, COLS, SCALARS,
              M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(X + rows * N + cols)
    y = tl.load(Y + rows * N + cols)
    tl.store(FLAT + tl.arange(0, M * N), tl.ravel(x))
    # [M, N] as [N, M] (row-major order kept), through the method.
    view = x.reshape(N, M)
    tl.store(VIEW + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], view)
    pairs = tl.join(x, y)
    two = tl.arange(0, 2)[None, None, :]
    tl.store(PAIRS + (rows[:, :, None] * N + cols[:, :, None]) * 2 + two, pairs)
    a, b = pairs.split()
    tl.store(HALVES + rows * N + cols, a - b)
    tl.store(MIXED + rows * (2 * N) + tl.arange(0, 2 * N)[None, :], tl.interleave(x, y))
    tl.store(ROWS + tl.arange(0, 2 * M)[:, None] * N + cols, tl.cat(x, y))
    tl.store(COLS + rows * (2 * N) + tl.arange(0, 2 * N)[None, :], tl.cat(x, y, dim=1))
    p, q = tl.split(tl.join(tl.sum(x), 2.5))
    tl.store(SCALARS, p)
    tl.store(SCALARS + 1, q)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_against_numpy(dtype):
    m, n = 8, 4
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.integers(-50, 50, (m, n)).astype(np.float32)).to(dtype)
    y = torch.from_numpy(rng.integers(-50, 50, (m, n)).astype(np.float32)).to(dtype)
    outs = {"flat": (m * n,), "view": (n, m), "pairs": (m, n, 2), "halves": (m, n),
            "mixed": (m, 2 * n), "rows": (2 * m, n), "cols": (m, 2 * n)}
    tensors = {k: torch.zeros(s, dtype=dtype) for k, s in outs.items()}
    scalars = torch.zeros(2, dtype=torch.float32)
    shape_ops[(1,)](x, y, *tensors.values(), scalars, M=m, N=n)
    xs, ys = x.numpy(), y.numpy()
    expected = {"flat": xs.ravel(), "view": xs.reshape(n, m), "pairs": np.stack([xs, ys], -1),
                "halves": xs - ys, "mixed": np.stack([xs, ys], -1).reshape(m, 2 * n),
                "rows": np.concatenate([xs, ys], 0), "cols": np.concatenate([xs, ys], 1)}
    for name, want in expected.items():
        np.testing.assert_array_equal(tensors[name].numpy(), want, err_msg=name)
    assert scalars.tolist() == [float(xs.sum()), 2.5]


@tile.jit
def bad_reshape(X, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), tl.reshape(tl.zeros([BLOCK], tl.float32), 2, BLOCK))


@tile.jit
def bad_split(X, BLOCK: tl.constexpr):
    a, b = tl.split(tl.zeros([BLOCK, 4], tl.float32))
    tl.store(X + tl.arange(0, BLOCK), a + b)


@tile.jit
def bad_cat(X, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK),
             tl.cat(tl.zeros([BLOCK], tl.float32), tl.zeros([2 * BLOCK], tl.float32)))


def test_errors_name_the_problem():
    with pytest.raises(CompilationError, match=r"tl.reshape: \[16\] has 16 elements, \[2, 16\] "
                                               r"has 32"):
        bad_reshape[(1,)](torch.zeros(16), BLOCK=16)
    with pytest.raises(CompilationError, match=r"tl.split: the last dimension must have 2 "
                                               r"elements, got \[16, 4\]"):
        bad_split[(1,)](torch.zeros(16), BLOCK=16)
    with pytest.raises(CompilationError, match=r"tl.cat takes tensors of one shape, got \[16\] "
                                               r"and \[32\]"):
        bad_cat[(1,)](torch.zeros(16), BLOCK=16)


@tile.jit
def sorting(X, ASC, DESC, FLIP_LAST, FLIP_FIRST, TOP, BOTTOM, MERGED,
            ROWS: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(ASC + offs, tl.sort(x))
    tl.store(DESC + offs, tl.sort(x, dim=1, descending=True))
    tl.store(FLIP_LAST + offs, tl.flip(x))
    tl.store(FLIP_FIRST + offs, tl.flip(x, 0))
    top = tl.arange(0, ROWS)[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(TOP + top, tl.topk(x, K))
    tl.store(BOTTOM + top, tl.topk(x, K, descending=False))
    # Ascending, then descending: bitonic.
    first_half = tl.arange(0, N)[None, :] < N // 2
    tl.store(MERGED + offs, tl.bitonic_merge(tl.where(first_half, tl.sort(x),
                                                      tl.flip(tl.sort(x)))))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_sort_flip_topk_against_torch(dtype):
    rows, n, k = 4, 64, 8
    gen = torch.Generator().manual_seed(5)
    # Few distinct values: ties among them.
    x = torch.randint(-20, 20, (rows, n), generator=gen).to(dtype)
    if dtype.is_floating_point:
        noise = torch.randn(rows, n, generator=gen) * (torch.rand(rows, n, generator=gen) < 0.5)
        x = x / 4 + noise.to(dtype)
    full = [torch.zeros(rows, n, dtype=dtype) for _ in range(4)]
    tops = [torch.zeros(rows, k, dtype=dtype) for _ in range(2)]
    merged = torch.zeros(rows, n, dtype=dtype)
    sorting[(1,)](x, *full, *tops, merged, ROWS=rows, N=n, K=k)
    ascending = x.sort(-1).values
    expected = {"sort": ascending, "descending": x.sort(-1, descending=True).values,
                "flip": x.flip(-1), "flip 0": x.flip(0), "topk": x.topk(k, -1).values,
                "topk smallest": x.topk(k, -1, largest=False).values}
    for got, (name, want) in zip(full + tops, expected.items()):
        assert torch.equal(got, want), name
    bitonic = torch.where(torch.arange(n) < n // 2, ascending, ascending.flip(-1))
    assert torch.equal(merged, bitonic.sort(-1).values)


@tile.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@tile.jit
def _last_nonzero(a, b):
    # Associative and not commutative: the operands' order shows.
    return tl.where(b == 0, a, b)


@tile.jit
def scans(X, CUM0, CUM1, REV, PROD, RUNMAX, FILL, FILL_BACK, SMALL, COLMAX, ROWLAST, ALL,
          ROWS: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    xi = x.to(tl.int32)
    tl.store(CUM0 + offs, tl.cumsum(x, 0))
    tl.store(CUM1 + offs, tl.cumsum(x, axis=1))
    tl.store(REV + offs, tl.cumsum(x, 1, reverse=True))
    tl.store(PROD + offs, tl.cumprod(x, -1))
    tl.store(RUNMAX + offs, tl.associative_scan(x, 1, _max_combine))
    tl.store(FILL + offs, tl.associative_scan(xi, 1, _last_nonzero))
    tl.store(FILL_BACK + offs, tl.associative_scan(xi, 1, _last_nonzero, reverse=True))
    # int8 sums in int32, as Triton's.
    tl.store(SMALL + offs, tl.cumsum(x.to(tl.int8), 1))
    tl.store(COLMAX + tl.arange(0, N), tl.reduce(x, 0, _max_combine))
    tl.store(ROWLAST + tl.arange(0, ROWS)[:, None], tl.reduce(xi, 1, _last_nonzero, keep_dims=True))
    tl.store(ALL, tl.reduce(x, None, _max_combine))


def _fold(row, combine, reverse=False):
    """Each prefix (suffix) of ``row`` combined in order, the earlier first."""
    out, acc = [0] * len(row), None
    order = range(len(row) - 1, -1, -1) if reverse else range(len(row))
    for i in order:
        acc = row[i] if acc is None else (combine(row[i], acc) if reverse else combine(acc, row[i]))
        out[i] = acc
    return out


def test_scans_and_reductions_against_torch():
    rows, n = 8, 32
    gen = torch.Generator().manual_seed(9)
    # Small integers in fp32: sums and products in any order are exact.
    x = torch.randint(-2, 3, (rows, n), generator=gen).float()
    x[:, ::5] = 1.0   # products stay away from zero for a while
    names = ["cum0", "cum1", "rev", "prod", "runmax", "fill", "fill_back"]
    outs = {name: torch.zeros(rows, n) for name in names}
    outs["fill"] = torch.zeros(rows, n, dtype=torch.int32)
    outs["fill_back"] = torch.zeros(rows, n, dtype=torch.int32)
    small = torch.zeros(rows, n, dtype=torch.int32)
    colmax, rowlast, total = torch.zeros(n), torch.zeros(rows, dtype=torch.int32), torch.zeros(1)
    scans[(1,)](x, *outs.values(), small, colmax, rowlast, total, ROWS=rows, N=n)
    last_nonzero = lambda a, b: a if b == 0 else b  # noqa: E731
    ints = x.int().tolist()
    expected = {
        "cum0": x.cumsum(0), "cum1": x.cumsum(1), "rev": x.flip(1).cumsum(1).flip(1),
        "prod": x.cumprod(1), "runmax": x.cummax(1).values,
        "fill": torch.tensor([_fold(r, last_nonzero) for r in ints], dtype=torch.int32),
        "fill_back": torch.tensor([_fold(r, last_nonzero, True) for r in ints],
                                  dtype=torch.int32)}
    for name, want in expected.items():
        assert torch.equal(outs[name], want), name
    assert torch.equal(small, x.int().cumsum(1, dtype=torch.int32))
    assert torch.equal(colmax, x.max(0).values)
    assert torch.equal(rowlast, expected["fill"][:, -1])
    assert total.item() == x.max().item()


@tile.jit
def gathers(X, ROW_INDEX, COL_INDEX, BY_ROW, BY_COL, VALUES, COUNTS, EVEN_COUNTS,
            M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    mk = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(BY_ROW + mk, tl.gather(x, tl.load(ROW_INDEX + mk), 1))
    kn = tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(BY_COL + kn, tl.gather(x, tl.load(COL_INDEX + kn), axis=0))
    values = tl.load(VALUES + tl.arange(0, M * N))
    tl.store(COUNTS + tl.arange(0, BINS), tl.histogram(values, BINS))
    even = tl.arange(0, M * N) % 2 == 0
    tl.store(EVEN_COUNTS + tl.arange(0, BINS), tl.histogram(values, BINS, mask=even))


def test_gather_and_histogram_against_torch():
    m, n, k, bins = 8, 16, 4, 16
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(m, n, generator=gen)
    row_index = torch.randint(0, n, (m, k), generator=gen, dtype=torch.int32)
    col_index = torch.randint(0, m, (k, n), generator=gen, dtype=torch.int32)
    # Some values outside the bins: they count nowhere.
    values = torch.randint(-3, bins + 3, (m * n,), generator=gen, dtype=torch.int32)
    by_row, by_col = torch.zeros(m, k), torch.zeros(k, n)
    counts, even_counts = torch.zeros(bins, dtype=torch.int32), torch.zeros(bins, dtype=torch.int32)
    gathers[(1,)](x, row_index, col_index, by_row, by_col, values, counts, even_counts,
                  M=m, N=n, K=k, BINS=bins)
    assert torch.equal(by_row, torch.gather(x, 1, row_index.long()))
    assert torch.equal(by_col, torch.gather(x, 0, col_index.long()))

    def bincount(v):
        return torch.bincount(v[(v >= 0) & (v < bins)].long(), minlength=bins).int()
    assert torch.equal(counts, bincount(values))
    assert torch.equal(even_counts, bincount(values[::2]))


@tile.jit
def _argmax_combine(value_a, index_a, value_b, index_b):
    # The larger value, the first index among equal ones.
    take_b = (value_b > value_a) | ((value_b == value_a) & (index_b < index_a))
    return tl.where(take_b, value_b, value_a), tl.where(take_b, index_b, index_a)


@tile.jit
def tuple_reductions(X, MAXES, ARGMAX, RUNNING, RUNNING_AT, TOTAL, TOTAL_AT,
                     ROWS: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    index = tl.broadcast_to(tl.arange(0, N)[None, :], ROWS, N)
    best, at = tl.reduce((x, index), 1, _argmax_combine)
    tl.store(MAXES + tl.arange(0, ROWS), best)
    tl.store(ARGMAX + tl.arange(0, ROWS), at)
    running, running_at = tl.associative_scan((x, index), 1, _argmax_combine)
    tl.store(RUNNING + offs, running)
    tl.store(RUNNING_AT + offs, running_at)
    total, total_at = tl.reduce((x, offs), None, _argmax_combine)
    tl.store(TOTAL, total)
    tl.store(TOTAL_AT, total_at)


def test_tuple_reductions_and_scans():
    rows, n = 4, 16
    gen = torch.Generator().manual_seed(2)
    x = torch.randint(-4, 5, (rows, n), generator=gen).float()   # ties
    maxes, argmax = torch.zeros(rows), torch.zeros(rows, dtype=torch.int32)
    running, running_at = torch.zeros(rows, n), torch.zeros(rows, n, dtype=torch.int32)
    total, total_at = torch.zeros(1), torch.zeros(1, dtype=torch.int32)
    tuple_reductions[(1,)](x, maxes, argmax, running, running_at, total, total_at,
                           ROWS=rows, N=n)
    assert torch.equal(maxes, x.max(1).values)
    # torch.argmax returns the first of equal maxima too.
    assert torch.equal(argmax, x.argmax(1).int())
    values, indices = x.cummax(1)
    assert torch.equal(running, values)
    first = torch.stack([torch.stack([(x[r, :i + 1] == values[r, i]).nonzero()[0, 0]
                                      for i in range(n)]) for r in range(rows)]).int()
    assert torch.equal(running_at, first)
    assert total.item() == x.max().item() and total_at.item() == x.flatten().argmax().item()


@tile.jit
def _doubled_then_combined(xs, fn):
    doubled = ()
    for i in tl.static_range(len(xs)):
        doubled = doubled + (xs[i] * 2,)
    return fn(*(doubled + doubled))


@tile.jit
def _sum_and_product(a0, a1, b0, b1):
    return a0 + b0, a1 * b1


@tile.jit
def tuples_at_compile_time(X, Y, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    total, product = _doubled_then_combined((x, x + 1), _sum_and_product)
    tl.store(Y + tl.arange(0, N), total + product)


def test_tuples_of_tensors_have_a_length_and_concatenate():
    # What the tuple forms of tl.reduce and tl.associative_scan are built on.
    x = torch.arange(4, dtype=torch.float32)
    y = torch.zeros(4)
    tuples_at_compile_time[(1,)](x, y, N=4)
    assert torch.equal(y, 4 * x + (2 * x + 2) ** 2)


