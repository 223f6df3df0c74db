"""An early return under a run-time if (Triton's form: what follows the if
runs on its other branch), in kernels and in helpers that return values;
on CPU tensors (the interpreter) against torch, and the returns still
refused."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def skip_programs(Y, n):
    pid = tl.program_id(0)
    if pid >= n:
        return
    tl.store(Y + pid, pid * 10)


@tile.jit
def _at_least(x, low):
    if x < low:
        return low
    return x


@tile.jit
def _non_negative(x):
    if x < 0:
        return 0          # a literal on one path, a run-time int on the other
    return x


@tile.jit
def _ordered(x, y):
    if x > y:
        return y, x
    return x, y


@tile.jit
def _pick(a, b, mode, flag):
    if mode == 0:
        return a
    else:
        if mode == 1:
            if flag > 0:
                return b
            return a + b
    c = a * b             # mode >= 2: runs on the else-branches' path only
    return c - 1.0


@tile.jit
def helpers(X, OUT, PAIRS, TILES, n, N: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(OUT + pid, _at_least(pid, n) * 100 + _non_negative(pid - n))
    first, second = _ordered(pid, n)
    tl.store(PAIRS + 2 * pid, first)
    tl.store(PAIRS + 2 * pid + 1, second)
    offs = tl.arange(0, N)
    a = tl.load(X + offs)
    b = a + 1.0
    tl.store(TILES + pid * N + offs, _pick(a, b, pid % 4, pid - 4))


@tile.jit
def return_in_else(Y, n):
    pid = tl.program_id(0)
    if pid < n:
        value = pid + 1
    else:
        tl.store(Y + pid, -pid)
        return
    tl.store(Y + pid, value * 2)


def test_kernel_returns_early():
    y = torch.full((12,), -1, dtype=torch.int32)
    skip_programs[(12,)](y, 7)
    expected = torch.tensor([i * 10 if i < 7 else -1 for i in range(12)], dtype=torch.int32)
    assert torch.equal(y, expected)


def test_return_in_the_else_branch():
    y = torch.zeros(9, dtype=torch.int32)
    return_in_else[(9,)](y, 5)
    expected = torch.tensor([(i + 1) * 2 if i < 5 else -i for i in range(9)], dtype=torch.int32)
    assert torch.equal(y, expected)


def test_helpers_return_early():
    n, programs, width = 5, 9, 16
    x = torch.randn(width)
    out = torch.zeros(programs, dtype=torch.int32)
    pairs = torch.zeros(2 * programs, dtype=torch.int32)
    tiles = torch.zeros(programs * width)
    helpers[(programs,)](x, out, pairs, tiles, n, N=width)
    for pid in range(programs):
        assert out[pid] == max(pid, n) * 100 + max(pid - n, 0)
        assert pairs[2 * pid:2 * pid + 2].tolist() == sorted([pid, n])
        a, b = x, x + 1.0
        mode = pid % 4
        if mode == 0:
            want = a
        elif mode == 1:
            want = b if pid - 4 > 0 else a + b
        else:
            want = a * b - 1.0
        torch.testing.assert_close(tiles[pid * width:(pid + 1) * width], want)


@tile.jit
def _abs_below(x, limit):
    if x > limit:
        return 0
    if x > 0:
        return x
    return -x


@tile.jit
def helper_in_a_loop(Y, n, limit):
    total = 0
    for i in range(-n, n):
        total += _abs_below(i, limit)
    tl.store(Y, total)


def test_a_helper_returning_early_inside_a_run_time_loop():
    y = torch.zeros(1, dtype=torch.int32)
    helper_in_a_loop[(1,)](y, 5, 3)
    assert y.item() == sum(0 if i > 3 else abs(i) for i in range(-5, 5))


@tile.jit
def _falls_off(x):
    if x > 0:
        return x


@tile.jit
def one_path_returns(Y, n):
    tl.store(Y, _falls_off(n))


@tile.jit
def _mixed_types(x):
    if x > 0:
        return x.to(tl.float32)
    return x


@tile.jit
def types_differ(Y, n):
    tl.store(Y, _mixed_types(n))


@tile.jit
def return_in_loop(Y, n):
    for i in range(n):
        if i > 3:
            return
        tl.store(Y + i, i)


@tile.jit
def return_skips_some_paths(Y, n):
    if n > 0:
        if n > 5:
            return
        n = n + 1
    tl.store(Y, n)


@pytest.mark.parametrize("kernel, args, message", [
    (one_path_returns, (torch.zeros(1, dtype=torch.int32), 3),
     "the branches of a run-time if return different kinds of values"),
    (types_differ, (torch.zeros(1), 3),
     "the returned value is fp32 in the then-branch but int32 in the else-branch"),
    (return_in_loop, (torch.zeros(8, dtype=torch.int32), 8),
     "'return' inside a loop is not supported"),
    (return_skips_some_paths, (torch.zeros(1, dtype=torch.int32), 3),
     "'return' inside an if on a run-time condition must end its branch, or the function"),
])
def test_returns_still_refused(kernel, args, message):
    with pytest.raises(CompilationError, match=message):
        kernel[(1,)](*args)
