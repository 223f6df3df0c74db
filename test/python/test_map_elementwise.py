"""tl.map_elementwise: a scalar function over tensors, its ifs on element
values run as both branches merged with tl.where; on CPU tensors (the
interpreter) against torch, and its errors."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (tl.exp(x) - 1)


@tile.jit
def early(x):
    if x < -1:
        return -1.0          # these elements stop here
    y = x * 2
    if y > 3:
        y = 3.0
    elif y < 0:
        y = y * y
    return y + 0.5


@tile.jit
def collatz(n):
    if n % 2 == 0:
        return n // 2
    return 3 * n + 1


@tile.jit
def both_signs(x):
    if x >= 0:
        return x, -x
    return -x, x


@tile.jit
def outer_sum(a, b):
    return a + b


@tile.jit
def apply(X, I, OUT, IOUT, PAIR, GRID, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    tl.store(OUT + offs, tl.map_elementwise(selu_scalar, x, 1.5))
    tl.store(OUT + N + offs, tl.map_elementwise(early, x))
    tl.store(IOUT + offs, tl.map_elementwise(collatz, tl.load(I + offs)))
    hi, lo = tl.map_elementwise(both_signs, x)
    tl.store(PAIR + offs, hi)
    tl.store(PAIR + N + offs, lo)
    # Arguments broadcast to one shape: a column and a row.
    grid = tl.map_elementwise(outer_sum, x[:, None], x[None, :])
    tl.store(GRID + offs[:, None] * N + offs[None, :], grid)


def _early(x):
    y = x * 2
    y = torch.where(y > 3, torch.full_like(y, 3.0), torch.where(y < 0, y * y, y))
    return torch.where(x < -1, torch.full_like(x, -1.0), y + 0.5)


def test_values_match_torch():
    n = 64
    x = torch.randn(n) * 2
    i = torch.randint(1, 1000, (n,), dtype=torch.int32)
    out, iout = torch.zeros(2 * n), torch.zeros(n, dtype=torch.int32)
    pair, grid = torch.zeros(2 * n), torch.zeros(n, n)
    apply[(1,)](x, i, out, iout, pair, grid, N=n)
    torch.testing.assert_close(out[:n], torch.where(x > 0, x, 1.5 * (torch.exp(x) - 1)))
    torch.testing.assert_close(out[n:], _early(x))
    assert torch.equal(iout, torch.where(i % 2 == 0, i // 2, 3 * i + 1))
    assert torch.equal(pair[:n], x.abs()) and torch.equal(pair[n:], -x.abs())
    torch.testing.assert_close(grid, x[:, None] + x[None, :])


@tile.jit
def halve_until_small(x):
    while x > 1:
        x = x / 2
    return x


@tile.jit
def writes(x, P):
    if x > 0:
        tl.store(P, x)
    return x


@tile.jit
def sometimes(x):
    if x > 0:
        return x


@tile.jit
def uses(X, fn: tl.constexpr, PACK: tl.constexpr):
    x = tl.load(X + tl.arange(0, 16))
    if fn == 0:
        y = tl.map_elementwise(halve_until_small, x)
    elif fn == 1:
        y = tl.map_elementwise(writes, x, X)
    elif fn == 2:
        y = tl.map_elementwise(sometimes, x)
    elif fn == 3:
        y = tl.map_elementwise(tl.exp, x)
    else:
        y = tl.map_elementwise(selu_scalar, x, 1.0, pack=PACK)
    tl.store(X + tl.arange(0, 16), y)


@pytest.mark.parametrize("fn, message", [
    (0, "a while loop on a per-element condition is not supported"),
    (1, r"cannot write memory \(tl.store\)"),
    (2, "sometimes does not return a value on every path"),
    (3, "scalar_fn must be a @tile.jit function"),
    (4, "pack must be 1, got 2")])
def test_errors(fn, message):
    with pytest.raises(CompilationError, match=f"tl.map_elementwise: .*{message}"):
        uses[(1,)](torch.zeros(16), fn=fn, PACK=2)
