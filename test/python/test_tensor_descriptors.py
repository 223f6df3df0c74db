"""Tensor descriptors (tl.make_tensor_descriptor, desc.load, desc.store):
their lowering to block pointers, and kernels run by the C++ interpreter
(tile-run run --backend interp) against numpy at shapes that are no
multiples of the blocks, so that the zero fill of loads and the bounds of
stores are exercised.  The errors are cases of test_frontend.py
(error_kernels.py)."""

import json
import re
import subprocess

import pytest

import tile
import tile.language as tl
from conftest import strip_locs
from tile.compiler import compile_kernel

try:
    import numpy as np
except ImportError:   # the lowering tests run without it
    np = None


def cdiv(a, b):
    return -(-a // b)


# -- kernels ------------------------------------------------------------------

@tile.jit
def copy_2d(X, Y, P, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    """Program (i, j) loads block (i, j) of X [M, N] and writes it whole to P,
    [cdiv(M, BM) * BM, cdiv(N, BN) * BN] (the zero fill shows there), and
    twice it through a descriptor of Y (converted to Y's type; the bounds
    keep it inside [M, N])."""
    x_desc = tl.make_tensor_descriptor(X, shape=[M, N], strides=[stride_x, 1],
                                       block_shape=[BM, BN])
    y_desc = tl.make_tensor_descriptor(Y, [M, N], [stride_y, 1], [BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    block = x_desc.load([om, on])
    rows = om + tl.arange(0, BM)
    cols = on + tl.arange(0, BN)
    tl.store(P + rows[:, None] * (tl.num_programs(1) * BN) + cols[None, :], block)
    tl.store_tensor_descriptor(y_desc, [om, on], block * 2)


@tile.jit
def _descriptor(ptr, rows, cols, stride, BR: tl.constexpr, BC: tl.constexpr):
    return tl.make_tensor_descriptor(ptr, [rows, cols], [stride, 1], [BR, BC])


@tile.jit
def _blocks(a_desc, b_desc, om, on, k):
    return a_desc.load([om, k]), tl.load_tensor_descriptor(b_desc, [k, on])


@tile.jit
def matmul(A, B, C, M, N, K, stride_a, stride_b, stride_c, BM: tl.constexpr,
           BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B as Triton users write it with descriptors: made once before
    the loop over K (one in a helper), loaded inside it at offsets that
    move (through a helper), the fp32 result stored to fp16."""
    a_desc = tl.make_tensor_descriptor(A, [M, K], [stride_a, 1], [BM, BK])
    b_desc = _descriptor(B, K, N, stride_b, BK, BN)
    c_desc = tl.make_tensor_descriptor(C, [M, N], [stride_c, 1], [BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a, b = _blocks(a_desc, b_desc, om, on, k)
        acc = tl.dot(a, b, acc)
    c_desc.store([om, on], acc)


@tile.jit
def scale_1d(X, Y, P, n, scale, B: tl.constexpr):
    """Rank 1: Y = X * scale where scale != 0 (a run-time if), and the
    NaN-padded block to P."""
    xd = tl.make_tensor_descriptor(X, [n], [1], [B], padding_option="nan")
    yd = tl.make_tensor_descriptor(Y, [n], [1], [B])
    o = tl.program_id(0) * B
    x = xd.load([o])
    tl.store(P + o + tl.arange(0, B), x)
    if scale != 0:
        yd.store([o], x * scale)


@tile.jit
def add_one_3d(X, Y, D0, D1, D2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    xd = tl.make_tensor_descriptor(X, [D0, D1, D2], [D1 * D2, D2, 1], [B0, B1, B2])
    yd = tl.make_tensor_descriptor(Y, [D0, D1, D2], [D1 * D2, D2, 1], [B0, B1, B2])
    offsets = [tl.program_id(2) * B0, tl.program_id(1) * B1, tl.program_id(0) * B2]
    yd.store(offsets, xd.load(offsets) + 1)


@tile.jit
def add_one_5d(X, Y, D0, D1, D2, D3, D4, B: tl.constexpr, B4: tl.constexpr):
    """Rank 5, blocks [B, B, B, B, B4]: the grid covers the last three
    dimensions, nested run-time loops the first two."""
    s3 = D4
    s2 = D3 * s3
    s1 = D2 * s2
    s0 = D1 * s1
    xd = tl.make_tensor_descriptor(X, [D0, D1, D2, D3, D4], [s0, s1, s2, s3, 1],
                                   [B, B, B, B, B4])
    yd = tl.make_tensor_descriptor(Y, xd.shape, xd.strides, xd.block_shape)
    o2 = tl.program_id(2) * B
    o3 = tl.program_id(1) * B
    o4 = tl.program_id(0) * B4
    for o0 in range(0, D0, B):
        for o1 in range(0, D1, B):
            yd.store([o0, o1, o2, o3, o4], xd.load([o0, o1, o2, o3, o4]) + 1)


# -- the lowering ---------------------------------------------------------------

def test_loads_and_stores_become_block_pointer_ops(verify):
    text = strip_locs(compile_kernel(matmul, "*fp16,*fp16,*fp16" + ",i32" * 6,
                                     {"BM": 16, "BN": 16, "BK": 32}))
    body = text[text.index("scf.for"):]
    # The descriptors' shapes and strides are int64 values made once, before
    # the loop; each load makes a block pointer at its offsets inside it,
    # row-major, checked in every dimension.
    loads = re.findall(r"(%\d+) = tile\.make_block_ptr %(A|B), \[(%\d+), (%\d+)\], "
                       r"\[(%\d+), (%\d+)\], \[(%\d+), (%\d+)\] order \[1, 0\] : "
                       r"!tile\.block_ptr<tensor<(16x32|32x16)xf16>>", body)
    assert [m[1] for m in loads] == ["A", "B"], body
    for m in loads:
        assert f"= tile.load_block {m[0]} boundary_check [0, 1] :" in body, body
        for operand in m[2:6]:
            assert re.search(rf"{operand} = arith\.(extsi|constant)[^\n]*i64", text), operand
            assert text.index(f"{operand} =") < text.index("scf.for")
    assert len(re.findall(r"tile\.load_block %\d+ boundary_check \[0, 1\] :", body)) == 2
    assert "tile.advance" not in text and "padding nan" not in text
    # The fp32 accumulator is converted to C's fp16, then stored.
    assert re.search(r"arith\.truncf %\d+ : tensor<16x16xf32> to tensor<16x16xf16>\n"
                     r"\s+%\d+ = tile\.make_block_ptr %C, .* order \[1, 0\] : "
                     r"!tile\.block_ptr<tensor<16x16xf16>>\n"
                     r"\s+tile\.store_block %\d+, %\d+ boundary_check \[0, 1\] :", text), text
    verify(text)


def test_padding_nan_reaches_the_load(verify):
    text = strip_locs(compile_kernel(scale_1d, "*fp32,*fp32,*fp32,i32,fp32", {"B": 16}))
    assert re.search(r"tile\.load_block %\d+ boundary_check \[0\] padding nan : "
                     r"!tile\.block_ptr<tensor<16xf32>>", text), text
    assert re.search(r"tile\.make_block_ptr %Y, \[%\d+\], \[%\d+\], \[%\d+\] order \[0\]", text)
    verify(text)


@tile.jit
def _as_methods(X, n, B: tl.constexpr):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [B, B])
    d.store([B, 0], d.load([0, B]))


@tile.jit
def _as_functions(X, n, B: tl.constexpr):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [B, B])
    tl.store_tensor_descriptor(d, [B, 0], tl.load_tensor_descriptor(d, [0, B]))


def test_methods_compile_as_their_functions():
    def body(fn):
        text = strip_locs(compile_kernel(fn, "*fp32,i32", {"B": 8}))
        return text[text.index("{", text.index("func.func")):].replace(fn.__name__, "K")
    assert body(_as_methods) == body(_as_functions)


def test_the_methods_are_declared():
    assert tl.tensor_descriptor.load.__tile_function__ is tl.load_tensor_descriptor
    assert tl.tensor_descriptor.store.__tile_function__ is tl.store_tensor_descriptor
    assert str(tl.tensor_descriptor.store.__signature__) == "(self, offsets, value) -> None"
    assert "The same as ``tl.load_tensor_descriptor(self, ...)``" in \
        tl.tensor_descriptor.load.__doc__
    with pytest.raises(RuntimeError, match=r"tensor_descriptor.load\(\) can only be called"):
        tl.tensor_descriptor.load(None, [0])
    with pytest.raises(RuntimeError, match="exist only inside a @tile.jit function"):
        tl.tensor_descriptor()


@tile.jit
def _attributes(X, Y, m, stride):
    d = tl.make_tensor_descriptor(X, [m, 64], [stride, 1], [4, 16])
    tl.static_assert(d.block_shape == (4, 16) and d.shape[1] == 64 and d.strides[1] == 1)
    tl.static_assert(d.dtype == tl.float16 and len(d.block_shape) == 2)
    tl.static_print(d, d.block_type, d.type)
    # The run-time entries: the shape in int32, the strides in int64.
    tl.store(Y, d.shape[0].to(tl.int64) + d.strides[0])


def test_attributes(capfd):
    text = strip_locs(compile_kernel(_attributes, "*fp16,*i64,i32,i32", {}))
    assert re.search(r"arith\.extsi %stride : i32 to i64", text), text
    assert capfd.readouterr().err == \
        "tensor_descriptor<fp16[4, 16]> fp16[4, 16] tensor_descriptor<fp16[4, 16]>\n"


# -- run by the interpreter -------------------------------------------------

@pytest.fixture
def interp(tmp_path, tile_compile, run_on_interpreter):
    """Compiles a kernel to its metadata and runs it with tile-run run
    --backend interp: the buffers are numpy arrays (read back after the
    run, in place), the scalars numbers."""
    if np is None:
        pytest.skip("numpy is needed to check kernels against it")

    def run(fn, signature, constexprs, grid, **args):
        module = tmp_path / f"{fn.__name__}.mlir"
        module.write_text(compile_kernel(fn, signature, constexprs))
        compiled = subprocess.run([tile_compile, str(module), "--emit=metadata"],
                                  capture_output=True, text=True)
        assert compiled.returncode == 0, compiled.stderr
        run_on_interpreter(module.with_suffix(".json"), args, grid)
    return run


def test_copy_2d_fills_with_zeros_and_stores_within_bounds(interp):
    m, n, bm, bn = 37, 50, 16, 16
    stride_x, stride_y = 53, 56
    rng = np.random.RandomState(0)
    x = rng.randn(m, stride_x).astype(np.float32)
    x[:, n:] = 1000.0   # past N: never read
    y = np.full((m + 3, stride_y), -7.0, np.float16)   # rows past M too
    grid = (cdiv(m, bm), cdiv(n, bn))
    p = np.full((grid[0] * bm, grid[1] * bn), np.nan, np.float32)
    interp(copy_2d, "*fp32,*fp16,*fp32,i32,i32,i32,i32", {"BM": bm, "BN": bn}, grid,
           X=x, Y=y, P=p, M=m, N=n, stride_x=stride_x, stride_y=stride_y)
    expected = np.zeros_like(p)
    expected[:m, :n] = x[:, :n]
    np.testing.assert_array_equal(p, expected)
    np.testing.assert_array_equal(y[:m, :n], (2 * x[:, :n]).astype(np.float16))
    assert (y[:m, n:] == -7).all() and (y[m:] == -7).all(), "wrote outside [M, N]"


@pytest.mark.parametrize("m, n, k", [(40, 24, 70), (16, 16, 32), (5, 3, 9)])
def test_matmul_loops_over_k(interp, m, n, k):
    bm, bn, bk = 16, 16, 32
    rng = np.random.RandomState(m + n + k)
    stride_a, stride_b, stride_c = k + 8, n + 8, n + 4
    a = rng.randn(m, stride_a).astype(np.float16)
    b = rng.randn(k, stride_b).astype(np.float16)
    c = np.full((m, stride_c), np.nan, np.float16)
    interp(matmul, "*fp16,*fp16,*fp16" + ",i32" * 6, {"BM": bm, "BN": bn, "BK": bk},
           (cdiv(m, bm), cdiv(n, bn)), A=a, B=b, C=c, M=m, N=n, K=k,
           stride_a=stride_a, stride_b=stride_b, stride_c=stride_c)
    a64, b64 = a[:, :k].astype(np.float64), b[:, :n].astype(np.float64)
    ref = a64 @ b64
    # One rounding to fp16, plus the fp32 accumulation's error.
    bound = 2.0**-11 * np.abs(ref) + k * 2.0**-24 * (np.abs(a64) @ np.abs(b64)) + 1e-6
    assert (np.abs(c[:, :n].astype(np.float64) - ref) <= bound).all()
    assert np.isnan(c[:, n:]).all(), "wrote past N"


def test_rank_1_pads_with_nan_and_runs_an_if(interp):
    n, b = 21, 16
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, -1.0, np.float32)
    p = np.zeros(cdiv(n, b) * b, np.float32)
    interp(scale_1d, "*fp32,*fp32,*fp32,i32,fp32", {"B": b}, (cdiv(n, b),),
           X=x, Y=y, P=p, n=n, scale=3.0)
    np.testing.assert_array_equal(y, 3 * x)
    np.testing.assert_array_equal(p[:n], x)
    assert np.isnan(p[n:]).all()


def test_rank_3(interp):
    dims, blocks = (3, 5, 11), (2, 4, 8)
    x = np.random.RandomState(3).randn(*dims).astype(np.float32)
    y = np.full(dims, np.nan, np.float32)
    grid = tuple(cdiv(d, b) for d, b in zip(reversed(dims), reversed(blocks)))
    interp(add_one_3d, "*fp32,*fp32,i32,i32,i32", dict(zip(("B0", "B1", "B2"), blocks)),
           grid, X=x, Y=y, D0=dims[0], D1=dims[1], D2=dims[2])
    np.testing.assert_array_equal(y, x + 1)


def test_rank_5(interp):
    dims, b, b4 = (3, 2, 3, 5, 7), 2, 4
    x = np.random.RandomState(5).randn(*dims).astype(np.float32)
    y = np.full(dims, np.nan, np.float32)
    grid = (cdiv(dims[4], b4), cdiv(dims[3], b), cdiv(dims[2], b))
    interp(add_one_5d, "*fp32,*fp32" + ",i32" * 5, {"B": b, "B4": b4}, grid,
           X=x, Y=y, **{f"D{i}": d for i, d in enumerate(dims)})
    np.testing.assert_array_equal(y, x + 1)


# -- the GPU lowering takes them ------------------------------------------------

@pytest.mark.parametrize("fn, signature, constexprs", [
    (copy_2d, "*fp32,*fp16,*fp32,i32,i32,i32,i32", {"BM": 16, "BN": 16}),
    (matmul, "*fp16,*fp16,*fp16" + ",i32" * 6, {"BM": 64, "BN": 64, "BK": 32}),
    (scale_1d, "*fp32,*fp32,*fp32,i32,fp32", {"B": 128}),
    (add_one_3d, "*fp32,*fp32,i32,i32,i32", {"B0": 2, "B1": 4, "B2": 32}),
    (add_one_5d, "*fp32,*fp32" + ",i32" * 5, {"B": 2, "B4": 32}),
], ids=["copy_2d", "matmul", "scale_1d", "add_one_3d", "add_one_5d"])
def test_descriptor_kernels_lower_to_ptx(tmp_path, tile_compile, fn, signature, constexprs):
    module = tmp_path / f"{fn.__name__}.mlir"
    module.write_text(compile_kernel(fn, signature, constexprs))
    compiled = subprocess.run([tile_compile, str(module), "--emit=ptx"], capture_output=True,
                              text=True)
    assert compiled.returncode == 0, compiled.stderr
    gpu = json.loads(module.with_suffix(".json").read_text())["gpu"]
    assert "unsupported" not in gpu and gpu["ptx"] == f"{fn.__name__}.ptx", gpu
