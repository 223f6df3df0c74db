"""tl.uint8, uint16, uint32, uint64: Triton's unsigned integers, signless in
the IR as signed ones, read by the ops the frontend picks (divui, remui,
shrui, cmpi ult, minui/maxui, extui, uitofp, fptoui; reductions with the
sign bit flipped). Kernels on CPU tensors (the interpreter) against numpy,
Triton's promotion rules, and the errors; on a GPU by
test/gpu/check_jit_launch.py."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def unsigned_ops(X, Y, QUOTIENT, REMAINDER, SHIFTED, BELOW, LARGER, SMALLER, LARGEST, SMALLEST,
                 AS_FLOAT, FROM_FLOAT, WIDE, BYTES, BYTE_SUM, MIXED, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    tl.store(QUOTIENT + offs, x // y)
    tl.store(REMAINDER + offs, x % y)
    tl.store(SHIFTED + offs, x >> 7)
    tl.store(BELOW + offs, (x < y).to(tl.int32))
    tl.store(LARGER + offs, tl.maximum(x, y))
    tl.store(SMALLER + offs, tl.minimum(x, y))
    tl.store(LARGEST, tl.max(x, 0))
    tl.store(SMALLEST, tl.min(x, 0))
    tl.store(AS_FLOAT + offs, x.to(tl.float32))
    tl.store(FROM_FLOAT + offs, (x.to(tl.float32) * 0.5).to(tl.uint32))
    tl.store(WIDE + offs, x.to(tl.uint64))
    tl.store(BYTE_SUM, tl.sum(tl.load(BYTES + offs), 0))
    # uint32 with int32 is uint32 (Triton's rule); a literal takes x's type.
    tl.store(MIXED + offs, (x + offs) * 3 + 1)


def _u32(values):
    return torch.from_numpy(np.asarray(values, np.uint32).view(np.int32).copy()).view(
        torch.uint32)


def _numpy(t):
    return t.view({1: torch.int8, 4: torch.int32, 8: torch.int64}[t.element_size()]).numpy() \
        .view({1: np.uint8, 4: np.uint32, 8: np.uint64}[t.element_size()])


def test_unsigned_ops_against_numpy():
    n = 32
    rng = np.random.default_rng(6)
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    y = rng.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x[:3] = [0xFFFFFFFF, 0x80000000, 0]
    y[:2] = [0x80000001, 3]
    u32 = [_u32(np.zeros(n)) for _ in range(3)]
    below = torch.zeros(n, dtype=torch.int32)
    larger, smaller = _u32(np.zeros(n)), _u32(np.zeros(n))
    largest, smallest = _u32([0]), _u32([0])
    as_float, from_float = torch.zeros(n), _u32(np.zeros(n))
    wide = torch.zeros(n, dtype=torch.uint64)
    data = rng.integers(0, 256, n, dtype=np.uint64).astype(np.uint8)
    byte_sum, mixed = _u32([0]), _u32(np.zeros(n))
    unsigned_ops[(1,)](_u32(x), _u32(y), *u32, below, larger, smaller, largest, smallest,
                       as_float, from_float, wide, torch.from_numpy(data), byte_sum, mixed,
                       N=n)
    quotient, remainder, shifted = (_numpy(t) for t in u32)
    np.testing.assert_array_equal(quotient, x // y)
    np.testing.assert_array_equal(remainder, x % y)
    np.testing.assert_array_equal(shifted, x >> 7)
    np.testing.assert_array_equal(below.numpy(), (x < y).astype(np.int32))
    np.testing.assert_array_equal(_numpy(larger), np.maximum(x, y))
    np.testing.assert_array_equal(_numpy(smaller), np.minimum(x, y))
    assert _numpy(largest)[0] == x.max() and _numpy(smallest)[0] == x.min()
    np.testing.assert_array_equal(as_float.numpy(), x.astype(np.float32))
    np.testing.assert_array_equal(_numpy(from_float), (x.astype(np.float32) * 0.5)
                                  .astype(np.uint32))
    np.testing.assert_array_equal(_numpy(wide), x.astype(np.uint64))
    assert _numpy(byte_sum)[0] == data.astype(np.uint32).sum()
    with np.errstate(over="ignore"):
        want = (x + np.arange(n, dtype=np.uint32)) * np.uint32(3) + np.uint32(1)
    np.testing.assert_array_equal(_numpy(mixed), want)


@tile.jit
def unsigned_atomics(TOTAL, BITS, VALUES, N: tl.constexpr):
    values = tl.load(VALUES + tl.arange(0, N))
    tl.atomic_add(TOTAL + tl.arange(0, N) * 0, values)
    tl.atomic_xor(BITS + tl.arange(0, N) * 0, values)


@tile.jit
def unsigned_atomic_max(TARGET, N: tl.constexpr):
    tl.atomic_max(TARGET + tl.arange(0, N), tl.zeros([N], tl.uint32))


@tile.jit
def print_unsigned(X):
    tl.device_print("x=", tl.load(X))


def test_atomics_printing_and_errors(capsys):
    values = np.array([0xFFFFFFF0, 0x20, 0x80000000, 7], np.uint32)
    total, bits = _u32([5]), _u32([0])
    unsigned_atomics[(1,)](total, bits, _u32(values), N=4)
    assert _numpy(total)[0] == (np.uint64(5) + values.astype(np.uint64).sum()) % 2**32
    assert _numpy(bits)[0] == np.bitwise_xor.reduce(values)
    with pytest.raises(CompilationError, match="tl.atomic_max updates fp32, int32, int64 "
                                               "elements, not uint32"):
        unsigned_atomic_max[(1,)](_u32(np.zeros(4)), N=4)
    print_unsigned[(1,)](_u32([0xFFFFFFFF]))
    assert "x=4294967295" in capsys.readouterr().out


def test_promotion_follows_triton():
    from tile.compiler import semantic
    promote = semantic.integer_promote
    assert promote(tl.uint32, tl.int32) == tl.uint32
    assert promote(tl.int32, tl.uint32) == tl.uint32
    assert promote(tl.uint8, tl.int32) == tl.int32
    assert promote(tl.uint64, tl.int32) == tl.uint64
    assert tl.uint16.is_int_unsigned() and not tl.int16.is_int_unsigned()
    assert tl.uint16.signature_name == "u16"
