"""Pointers to and from their int64 addresses (x.to(tl.pointer_type(...)),
p.to(tl.int64): tile.int_to_ptr, tile.ptr_to_int), as Triton's grouped GEMM
reads its operands' addresses from a table; on CPU tensors (the
interpreter), and the frontend's errors. The GPU lowering (inttoptr,
ptrtoint) is checked by test/Pipeline/tile-to-llvm-pointer-casts.mlir."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def through_addresses(X, TABLE, OUT, N: tl.constexpr):
    offs = tl.arange(0, N)
    # An address written to a table, read back and made a pointer again.
    tl.store(TABLE, X.to(tl.int64))
    tl.debug_barrier()
    base = tl.load(TABLE).to(tl.pointer_type(tl.float32))
    tl.store(OUT + offs, tl.load(base + offs))
    # Each element's address, 4 bytes apart; a pointer through another
    # pointee type and back.
    tl.store(OUT + N + offs, ((X + offs).to(tl.int64) - X.to(tl.int64)).to(tl.float32))
    back = (X + offs).to(tl.pointer_type(tl.int32)).to(tl.pointer_type(tl.float32))
    tl.store(OUT + 2 * N + offs, tl.load(back) * 2)


@tile.jit
def from_int32(X):
    tl.store(X, tl.load(X))
    p = tl.program_id(0).to(tl.pointer_type(tl.float32))
    tl.store(p, 1.0)


@tile.jit
def to_int32(X):
    tl.store(X, X.to(tl.int32))


def test_addresses_round_trip():
    x = torch.arange(8, dtype=torch.float32) * 1.5
    table = torch.zeros(1, dtype=torch.int64)
    out = torch.zeros(24)
    through_addresses[(1,)](x, table, out, N=8)
    assert torch.equal(out[:8], x)
    assert out[8:16].tolist() == [4.0 * i for i in range(8)]
    assert torch.equal(out[16:], x * 2)


def test_errors_name_the_widths():
    with pytest.raises(CompilationError, match="a pointer is made from an int64 address"):
        from_int32[(1,)](torch.zeros(1))
    with pytest.raises(CompilationError, match="a pointer's address is an int64"):
        to_int32[(1,)](torch.zeros(1, dtype=torch.int32))
