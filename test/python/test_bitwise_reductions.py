"""tl.xor_sum and tl.reduce_or (tile.reduce xor / or): on CPU tensors
through the interpreter against Python's integers, along either axis of a
ragged block, on booleans (parity, any), and refused on floats."""

import functools
import operator

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def bitwise_kernel(X, XOR_ROWS, OR_COLS, PARITY, ANY_NEGATIVE, n_rows,
                   ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(X + rows[:, None] * COLS + cols[None, :], mask=rows[:, None] < n_rows, other=0)
    tl.store(XOR_ROWS + rows, tl.xor_sum(x, 1))
    tl.store(OR_COLS + cols, tl.reduce_or(x, 0))
    tl.store(PARITY + rows, tl.xor_sum(x > 0, 1).to(tl.int32))
    tl.store(ANY_NEGATIVE + cols, tl.reduce_or(x < 0, 0).to(tl.int32))


def test_xor_sum_and_reduce_or():
    torch.manual_seed(6)
    rows, n_rows, cols = 16, 13, 64          # 13 rows loaded of 16
    x = torch.randint(-2**31, 2**31 - 1, (rows, cols), dtype=torch.int32)
    x[n_rows:] = 0
    xor_rows, parity = torch.zeros(rows, dtype=torch.int32), torch.zeros(rows, dtype=torch.int32)
    or_cols, any_negative = (torch.zeros(cols, dtype=torch.int32) for _ in range(2))
    bitwise_kernel[(1,)](x, xor_rows, or_cols, parity, any_negative, n_rows,
                         ROWS=rows, COLS=cols)
    values = x.tolist()
    assert xor_rows.tolist() == [functools.reduce(operator.xor, row) for row in values]
    assert or_cols.tolist() == [functools.reduce(operator.or_, col) for col in zip(*values)]
    assert parity.tolist() == [sum(v > 0 for v in row) % 2 for row in values]
    assert any_negative.tolist() == [int(any(v < 0 for v in col)) for col in zip(*values)]


@tile.jit
def xor_of_floats(X, N: tl.constexpr):
    tl.store(X, tl.xor_sum(tl.load(X + tl.arange(0, N))))


def test_xor_sum_of_floats_is_a_compile_error():
    from tile.compiler import compile_kernel
    from tile.compiler.errors import CompilationError
    with pytest.raises(CompilationError, match="tl.xor_sum combines integers, got fp32"):
        compile_kernel(xor_of_floats, "*fp32", {"N": 16})
