"""tl.to_tensor (Python numbers made scalars of Triton's types), tl.tuple
and tl.pi32_t, on CPU tensors (the interpreter), and their errors."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def scalars(OUT, F64, WIDE):
    small = tl.to_tensor(7)                  # int32
    unsigned = tl.to_tensor(3_000_000_000)   # uint32: wraps as one
    big = tl.to_tensor(1 << 40)              # int64
    flag = tl.to_tensor(True)                # int1
    half = tl.to_tensor(0.5)                 # float32
    huge = tl.to_tensor(1e300)               # float64: past float32
    pair = tl.tuple([small, half])
    tl.static_assert(small.dtype == tl.int32)
    tl.static_assert(unsigned.dtype == tl.uint32)
    tl.static_assert(big.dtype == tl.int64)
    tl.static_assert(flag.dtype == tl.int1)
    tl.static_assert(half.dtype == tl.float32)
    tl.static_assert(huge.dtype == tl.float64)
    tl.static_assert(len(pair) == 2)
    tl.static_assert(tl.to_tensor(pair[0]).dtype == tl.int32)   # a tensor as it is
    tl.store(OUT, pair[0].to(tl.float32) + pair[1])
    tl.store(OUT + 1, flag.to(tl.float32))
    tl.store(WIDE + 1, (unsigned + 1).to(tl.int64))   # uint32: zero-extended
    tl.store(F64, huge)
    tl.store(WIDE, big)


@tile.jit
def through_pi32(X, OUT):
    # An address made a tl.pi32_t, Triton's one predefined pointer type.
    p = X.to(tl.int64).to(tl.pi32_t)
    tl.store(OUT, tl.load(p) * 3)


@tile.jit
def to_tensor_of_string(OUT):
    tl.store(OUT, tl.to_tensor("x"))


@tile.jit
def tuple_of_a_tensor(OUT):
    tl.store(OUT, tl.tuple(tl.to_tensor(1))[0])


def test_scalars_get_tritons_types():
    out = torch.zeros(2)
    f64 = torch.zeros(1, dtype=torch.float64)
    wide = torch.zeros(2, dtype=torch.int64)
    scalars[(1,)](out, f64, wide)
    assert out.tolist() == [7.5, 1.0]
    assert f64.item() == 1e300
    assert wide.tolist() == [1 << 40, 3_000_000_001]


def test_pi32_t_reads_int32():
    x = torch.tensor([-5], dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    through_pi32[(1,)](x, out)
    assert out.item() == -15
    assert tl.pi32_t == tl.pointer_type(tl.int32)


def test_errors():
    with pytest.raises(CompilationError, match="tl.to_tensor expects a tensor or a number"):
        to_tensor_of_string[(1,)](torch.zeros(1))
    with pytest.raises(CompilationError, match=r"tl.tuple\(...\) takes one tuple or list"):
        tuple_of_a_tensor[(1,)](torch.zeros(1))
