"""desc.atomic_add, atomic_min, atomic_max, atomic_and, atomic_or and
atomic_xor on tensor descriptors (tile.atomic_rmw_block), in kernels
launched on CPU tensors (the interpreter): many programs updating one
ragged tensor, elements outside it left alone, and the frontend's errors.
The GPU lowerings (the TMA's reductions a warp at a time, red.global) are
checked by test/Pipeline/tile-to-llvm-tma-reduce.mlir, and on a GPU by
test/gpu/check_jit_launch.py."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def add_blocks(X, OUT, M, N, STEPS, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program p adds X[p, s] to OUT's block (s % 3, p % 2) for each step
    s: programs and steps meet on the same blocks."""
    pid = tl.program_id(0)
    out = tl.make_tensor_descriptor(OUT, shape=[M, N], strides=[N, 1],
                                    block_shape=[BLOCK_M, BLOCK_N])
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    for step in range(STEPS):
        x = tl.load(X + ((pid * STEPS + step) * BLOCK_M + rows) * BLOCK_N + cols)
        out.atomic_add([(step % 3) * BLOCK_M, (pid % 2) * BLOCK_N], x)


@tile.jit
def update_ints(X, OUT, M, N, KIND: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    out = tl.make_tensor_descriptor(OUT, shape=[M, N], strides=[N, 1],
                                    block_shape=[BLOCK, BLOCK])
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + (pid * BLOCK + offs[:, None]) * BLOCK + offs[None, :])
    if KIND == "min":
        out.atomic_min([0, 0], x)
    elif KIND == "max":
        out.atomic_max([0, 0], x)
    elif KIND == "and":
        out.atomic_and([0, 0], x)
    elif KIND == "or":
        out.atomic_or([0, 0], x)
    else:
        out.atomic_xor([0, 0], x)


@tile.jit
def add_half(OUT, BLOCK: tl.constexpr):
    out = tl.make_tensor_descriptor(OUT, shape=[BLOCK, BLOCK], strides=[BLOCK, 1],
                                    block_shape=[BLOCK, BLOCK])
    out.atomic_add([0, 0], tl.zeros([BLOCK, BLOCK], tl.float16))


@tile.jit
def add_wrong_shape(OUT, BLOCK: tl.constexpr):
    out = tl.make_tensor_descriptor(OUT, shape=[BLOCK, BLOCK], strides=[BLOCK, 1],
                                    block_shape=[BLOCK, BLOCK])
    out.atomic_add([0, 0], tl.zeros([BLOCK, BLOCK // 2], tl.float32))


@tile.jit
def exchange(OUT, BLOCK: tl.constexpr):
    out = tl.make_tensor_descriptor(OUT, shape=[BLOCK, BLOCK], strides=[BLOCK, 1],
                                    block_shape=[BLOCK, BLOCK])
    out.atomic_xchg([0, 0], tl.zeros([BLOCK, BLOCK], tl.float32))


def test_programs_add_to_shared_blocks_of_a_ragged_tensor():
    programs, steps, block_m, block_n = 5, 4, 16, 32
    m, n = 2 * block_m + 5, block_n + 9       # the third row block and the
    rng = np.random.default_rng(7)            # second column block cross the ends
    x = rng.standard_normal((programs, steps, block_m, block_n)).astype(np.float32)
    start = rng.standard_normal((m, n)).astype(np.float32)
    out = torch.from_numpy(start.copy())
    add_blocks[(programs,)](torch.from_numpy(x), out, m, n, steps,
                            BLOCK_M=block_m, BLOCK_N=block_n)
    expected = start.astype(np.float64)
    for p in range(programs):
        for s in range(steps):
            r0, c0 = (s % 3) * block_m, (p % 2) * block_n
            rows, cols = min(block_m, m - r0), min(block_n, n - c0)
            expected[r0:r0 + rows, c0:c0 + cols] += x[p, s, :rows, :cols]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind, combine", [
    ("min", np.minimum), ("max", np.maximum), ("and", np.bitwise_and),
    ("or", np.bitwise_or), ("xor", np.bitwise_xor)])
def test_integer_updates(kind, combine):
    programs, block = 3, 16
    m, n = 11, 13                             # the block crosses both ends
    rng = np.random.default_rng(11)
    x = rng.integers(-2**31, 2**31, (programs, block, block), dtype=np.int64).astype(np.int32)
    start = rng.integers(-2**31, 2**31, (m, n), dtype=np.int64).astype(np.int32)
    out = torch.from_numpy(start.copy())
    update_ints[(programs,)](torch.from_numpy(x), out, m, n, KIND=kind, BLOCK=block)
    expected = start.copy()
    for p in range(programs):
        expected = combine(expected, x[p, :m, :n])
    np.testing.assert_array_equal(out.numpy(), expected)


def test_errors_name_the_problem():
    with pytest.raises(CompilationError, match=r"desc.atomic_add updates fp32, fp64, int32, "
                                               r"int64, uint32, uint64 elements, not fp16"):
        add_half[(1,)](torch.zeros(16, 16, dtype=torch.float16), BLOCK=16)
    with pytest.raises(CompilationError, match=r"desc.atomic_add: the value must be a tensor "
                                               r"of the block's shape \[16, 16\]"):
        add_wrong_shape[(1,)](torch.zeros(16, 16), BLOCK=16)
    with pytest.raises(CompilationError, match="tensor descriptor has no attribute 'atomic_xchg'"):
        exchange[(1,)](torch.zeros(16, 16), BLOCK=16)


def test_methods_outside_a_kernel_say_where_they_run():
    assert tl.tensor_descriptor.atomic_add.__doc__.startswith("Updates the block")
    with pytest.raises(RuntimeError, match="only be called inside a @tile.jit function"):
        tl.tensor_descriptor.atomic_max(None, [0], None)


@tile.jit
def copy_ints(X, OUT, M, N, BLOCK: tl.constexpr):
    src = tl.make_tensor_descriptor(X, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    dst = tl.make_tensor_descriptor(OUT, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    dst.store([0, 0], src.load([0, 0]) + 1)


def test_integer_blocks_load_and_store():
    # The interpreter reads and writes integer memory through block
    # pointers as it does through pointers.
    x = torch.arange(11 * 13, dtype=torch.int32).reshape(11, 13)
    out = torch.zeros(11, 13, dtype=torch.int32)
    copy_ints[(1,)](x, out, 11, 13, BLOCK=16)
    assert torch.equal(out, x + 1)
