"""Tensor descriptors (tl.make_tensor_descriptor, desc.load, desc.store):
their lowering to block pointers.  The errors are cases of
test_frontend.py (error_kernels.py)."""

import re

import pytest

import tile
import tile.language as tl
from conftest import strip_locs
from tile.compiler import compile_kernel

# -- kernels ------------------------------------------------------------------

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
