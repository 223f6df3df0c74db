"""tl.const: a pointer parameter whose data the kernel only reads. Reads
through it and through pointers made from it (offsets, block pointers,
helpers) run on the interpreter; every write through them is refused at
compile time, naming the annotation."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def _twice(P, offs):
    return tl.load(P + offs) * 2


@tile.jit
def reads(X: tl.const, OUT, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(OUT + offs, _twice(X, offs))
    block = tl.make_block_ptr(X, (N,), (1,), (0,), (N,), (0,))
    tl.store(OUT + N + offs, tl.load(tl.advance(block, (0,))) + 1)


@tile.jit
def stores(X: tl.const, N: tl.constexpr):
    tl.store(X + tl.arange(0, N), 0.0)


@tile.jit
def adds(X: tl.const):
    tl.atomic_add(X, 1.0)


@tile.jit
def swaps(X: tl.const):
    tl.atomic_cas(X, 0, 1)


@tile.jit
def stores_a_block(X: tl.const, N: tl.constexpr):
    tl.store(tl.make_block_ptr(X, (N,), (1,), (0,), (N,), (0,)), tl.zeros((N,), tl.float32))


@tile.jit
def scalar_const(n: tl.const):
    pass


def test_reads_through_const_pointers():
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(16)
    reads[(1,)](x, out, N=8)
    assert torch.equal(out[:8], x * 2)
    assert torch.equal(out[8:], x + 1)


@pytest.mark.parametrize("kernel, what", [
    (stores, "tl.store"), (adds, "tl.atomic_add"), (swaps, "tl.atomic_cas"),
    (stores_a_block, "tl.store")])
def test_writes_are_refused(kernel, what):
    x = torch.zeros(8, dtype=torch.int32 if kernel is swaps else torch.float32)
    kwargs = {"N": 8} if kernel in (stores, stores_a_block) else {}
    with pytest.raises(CompilationError,
                       match=f"{what} writes through a pointer to const data .*tl.const"):
        kernel[(1,)](x, **kwargs)
    assert not x.any()


def test_only_pointers_are_const():
    with pytest.raises(CompilationError, match="'n' is annotated tl.const but is not a pointer"):
        scalar_const[(1,)](3)
