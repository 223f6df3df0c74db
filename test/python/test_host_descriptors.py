"""Tensor descriptors passed by the host (tile.TensorDescriptor for a
parameter of type tensordesc<...>): the signature's spelling, the hidden
parameters the frontend expands a descriptor parameter into and the block
pointers it loads through, kernels run by the C++ interpreter (tile-run run
--backend interp) with the expanded arguments against numpy at shapes that
are no multiples of the blocks, the launch path's checks (tile.runtime,
no GPU), and the sm_90a lowering."""

import json
import os
import re
import subprocess
import sys

import pytest

import tile
import tile.language as tl
from conftest import PYTHON_DIR, REPO, strip_locs
from tile import runtime
from tile.compiler import UsageError, compile_kernel, parse_signature
from tile.compiler.options import CompileOptions
from tile.runtime import DevicePointer
from tile.tensor_descriptor import TensorDescriptor, descriptor_params, expand_descriptors

try:
    import numpy as np
except ImportError:   # the lowering tests run without it
    np = None


def cdiv(a, b):
    return -(-a // b)


# -- kernels ------------------------------------------------------------------

@tile.jit(launch=tile.Launch(grid=("cdiv(x_desc__shape1, BN)", "cdiv(x_desc__shape0, BM)")))
def copy_desc(x_desc, y_desc, P, BM: tl.constexpr, BN: tl.constexpr):
    """Program (j, i) loads block (i, j) of x_desc, writes it whole to P,
    [cdiv(M, BM) * BM, cdiv(N, BN) * BN] (the zero fill shows there), and
    twice it through y_desc (converted to its type, within its bounds)."""
    om = tl.program_id(1) * BM
    on = tl.program_id(0) * BN
    block = x_desc.load([om, on])
    rows = om + tl.arange(0, BM)
    cols = on + tl.arange(0, BN)
    tl.store(P + rows[:, None] * (tl.num_programs(0) * BN) + cols[None, :], block)
    y_desc.store([om, on], block * 2)


COPY_SIGNATURE = "tensordesc<fp32[16, 32]>, tensordesc<fp16[16,32]>, *fp32"
COPY_CONSTEXPRS = {"BM": 16, "BN": 32}


@tile.jit
def matmul_desc(a_desc, b_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    """C = A @ B, K read from the descriptor (a run-time i32)."""
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, a_desc.shape[1], BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc)


def matmul_signature(bm, bn, bk):
    return (f"tensordesc<fp16[{bm}, {bk}]>,tensordesc<fp16[{bk}, {bn}]>,"
            f"tensordesc<fp16[{bm}, {bn}]>")


# -- the signature and the emitted IR -------------------------------------------

def test_the_spelling_is_tritons():
    spaced, tight = parse_signature("tensordesc<fp16[64, 64]>, tensordesc<bf16[8,16,32]>"), \
        parse_signature(" tensordesc< fp16 [64,64] >,tensordesc<bf16[8, 16, 32]>")
    assert spaced == tight
    assert [str(t) for t in spaced] == ["tensor_descriptor<fp16[64, 64]>",
                                        "tensor_descriptor<bf16[8, 16, 32]>"]
    # A list of entries splits nothing.
    assert parse_signature(["*fp16", "tensordesc<i8[16, 16]>"])[1].block_shape == (16, 16)


def test_hidden_parameters_and_block_pointers(verify):
    text = compile_kernel(copy_desc, COPY_SIGNATURE, COPY_CONSTEXPRS)
    header = strip_locs(text[text.index("func.func"):text.index("attributes {tile.const")])
    # The base 16-byte aligned, the shape i32, the strides but the last
    # i64 multiples of 16 bytes (4 fp32, 8 fp16); the other parameters after.
    assert header == (
        "func.func @copy_desc(%x_desc__base: !tile.ptr<f32> {tile.divisibility = 16 : i32}, "
        "%x_desc__shape0: i32, %x_desc__shape1: i32, "
        "%x_desc__stride0: i64 {tile.divisibility = 4 : i32}, "
        "%y_desc__base: !tile.ptr<f16> {tile.divisibility = 16 : i32}, "
        "%y_desc__shape0: i32, %y_desc__shape1: i32, "
        "%y_desc__stride0: i64 {tile.divisibility = 8 : i32}, %P: !tile.ptr<f32>) "), header
    # Each hidden parameter is named after itself at the descriptor
    # parameter's position.
    assert 'loc("x_desc__stride0"(' in text
    body = strip_locs(text)
    # The shapes widened once at the top; the last stride the constant 1.
    load = re.search(r"(%\d+) = tile\.make_block_ptr %x_desc__base, \[(%\d+), (%\d+)\], "
                     r"\[%x_desc__stride0, (%\d+)\], \[%\d+, %\d+\] order \[1, 0\] : "
                     r"!tile\.block_ptr<tensor<16x32xf32>>", body)
    assert load, body
    assert f"{load[2]} = arith.extsi %x_desc__shape0 : i32 to i64" in body
    assert f"{load[3]} = arith.extsi %x_desc__shape1 : i32 to i64" in body
    assert f"{load[4]} = arith.constant 1 : i64" in body
    assert f"tile.load_block {load[1]} boundary_check [0, 1] :" in body
    assert re.search(r"tile\.make_block_ptr %y_desc__base, \[%\d+, %\d+\], "
                     r"\[%y_desc__stride0, %\d+\], .* order \[1, 0\] : "
                     r"!tile\.block_ptr<tensor<16x32xf16>>\n\s+tile\.store_block %\d+, %\d+ "
                     r"boundary_check \[0, 1\]", body), body
    verify(text)


def test_the_metadata_lists_the_descriptors(tmp_path, tile_compile):
    module = tmp_path / "copy_desc.mlir"
    module.write_text(compile_kernel(copy_desc, COPY_SIGNATURE, COPY_CONSTEXPRS))
    compiled = subprocess.run([tile_compile, str(module), "--emit=metadata"],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    meta = json.loads(module.with_suffix(".json").read_text())
    assert [(p["name"], p["type"], p.get("divisibility")) for p in meta["params"]] == [
        ("x_desc__base", "*fp32", 16), ("x_desc__shape0", "i32", None),
        ("x_desc__shape1", "i32", None), ("x_desc__stride0", "i64", 4),
        ("y_desc__base", "*fp16", 16), ("y_desc__shape0", "i32", None),
        ("y_desc__shape1", "i32", None), ("y_desc__stride0", "i64", 8),
        ("P", "*fp32", None)]
    assert meta["tensor_descriptors"] == [
        {"name": "x_desc", "type": "tensordesc<fp32[16, 32]>", "element_type": "fp32",
         "block_shape": [16, 32], "base": "x_desc__base",
         "shape": ["x_desc__shape0", "x_desc__shape1"], "strides": ["x_desc__stride0"]},
        {"name": "y_desc", "type": "tensordesc<fp16[16, 32]>", "element_type": "fp16",
         "block_shape": [16, 32], "base": "y_desc__base",
         "shape": ["y_desc__shape0", "y_desc__shape1"], "strides": ["y_desc__stride0"]}]
    assert meta["launch"]["grid"] == ["cdiv(x_desc__shape1, BN)", "cdiv(x_desc__shape0, BM)"]


@tile.jit
def _rank_1(d, n):
    tl.static_assert(d.block_shape == (64,) and d.dtype == tl.int8)
    d.store([0], d.load([n]) + 1)


def test_rank_1_has_no_stride_parameter():
    text = strip_locs(compile_kernel(_rank_1, "tensordesc<i8[64]>,i32", {}))
    assert "func.func @_rank_1(%d__base: !tile.ptr<i8> {tile.divisibility = 16 : i32}, " \
        "%d__shape0: i32, %n: i32)" in text, text


@tile.jit
def _collides(a, a__shape1):
    pass


@tile.jit
def _rank_2(d):
    pass


@pytest.mark.parametrize("fn, signature, metadata, message", [
    (_rank_2, "tensordesc<fp16(64, 64)>", None, "a tensor descriptor is spelled "
     r"tensordesc<ELEMENT\[BLOCK, ...\]>"),
    (_rank_2, "tensordesc<fp17[64, 64]>", None, "unknown element type 'fp17'"),
    (_rank_2, "tensordesc<fp16[64, 48]>", None, "must be a power of two"),
    (_rank_2, "tensordesc<fp16[64, n]>", None, "the block shape is integers"),
    (_rank_2, "tensordesc<fp16[2, 2, 2, 2, 2, 8]>", None, "1 to 5 dimensions"),
    (_rank_2, "tensordesc<i1[64, 64]>", None, "int1 elements are not supported"),
    (_rank_2, "tensordesc<fp32[64, 2]>", None, "at least 16 bytes, got 2 fp32 elements"),
    (_rank_2, "tensordesc<fp16[64, 64]>:16", None, "a tensor descriptor takes no divisibility"),
    (_collides, "tensordesc<fp16[8, 8]>,i32", None,
     "'a__shape1' names a parameter and a hidden parameter of the tensor descriptor 'a'"),
    (_rank_2, "tensordesc<fp16[8, 8]>", {"tensor_descriptors": []},
     "the metadata key 'tensor_descriptors' is the frontend's"),
])
def test_signature_errors(fn, signature, metadata, message):
    with pytest.raises(UsageError, match=message):
        compile_kernel(fn, signature, {}, metadata=metadata)


def test_the_cli_takes_descriptor_signatures(tmp_path, tile_compile):
    """examples/descriptor_matmul.py as its docstring compiles it: the
    commas inside tensordesc<...> split no entry."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1",
               TILE_COMPILE=tile_compile)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tile.compile",
                               "examples/descriptor_matmul.py:matmul", *args], cwd=REPO,
                              env=env, capture_output=True, text=True)
    out = tmp_path / "descriptor_matmul.mlir"
    result = cli("--signature", ",".join(["tensordesc<fp16[64, 64]>"] * 3), "--constexpr",
                 "BM=64", "--constexpr", "BN=64", "--constexpr", "BK=64", "--emit",
                 "metadata", "-o", str(out))
    assert result.returncode == 0, result.stderr
    meta = json.loads(out.with_suffix(".json").read_text())
    assert [d["name"] for d in meta["tensor_descriptors"]] == ["a_desc", "b_desc", "c_desc"]
    assert len(meta["params"]) == 12
    result = cli("--signature", "tensordesc<fp16[64, 64]>, tensordesc<fp16[64,64]>")
    assert result.returncode == 1
    assert "error: kernel 'matmul' has 3 run-time parameters (a_desc, b_desc, c_desc) but " \
        "the signature gives 2 types" in result.stderr, result.stderr


# -- run by the interpreter -------------------------------------------------

@pytest.fixture
def interp(tmp_path, tile_compile, run_on_interpreter):
    """Compiles a kernel to its metadata and runs it with tile-run run
    --backend interp.  A TensorDescriptor over a numpy array is expanded as
    the launch path expands it (tile.tensor_descriptor, from the metadata)
    into the hidden parameters, which tile-run takes by name like any
    other; the arrays are read back after the run, in place."""
    if np is None:
        pytest.skip("numpy is needed to check kernels against it")

    def run(fn, signature, constexprs, grid=None, **args):
        module = tmp_path / f"{fn.__name__}.mlir"
        module.write_text(compile_kernel(fn, signature, constexprs))
        compiled = subprocess.run([tile_compile, str(module), "--emit=metadata"],
                                  capture_output=True, text=True)
        assert compiled.returncode == 0, compiled.stderr
        meta = json.loads(module.with_suffix(".json").read_text())
        types = {p["name"]: p["type"] for p in meta["params"]}
        args = expand_descriptors(descriptor_params(meta), args, fn.__name__, types)
        return run_on_interpreter(module.with_suffix(".json"), args, grid)
    return run


def test_copy_fills_with_zeros_and_stores_within_bounds(interp):
    m, n, bm, bn = 37, 50, 16, 32
    rng = np.random.RandomState(0)
    x = rng.randn(m, 52).astype(np.float32)   # rows of 52: 208 bytes, 16-byte multiples
    x[:, n:] = 1000.0   # past N: never read
    y = np.full((m + 3, 56), -7.0, np.float16)   # rows past M too
    grid = (cdiv(n, bn), cdiv(m, bm))
    p = np.full((grid[1] * bm, grid[0] * bn), np.nan, np.float32)
    out = interp(copy_desc, COPY_SIGNATURE, COPY_CONSTEXPRS,
                 x_desc=TensorDescriptor(x, [m, n], [52, 1], [bm, bn]),
                 y_desc=TensorDescriptor(y, [m, n], [56, 1], [bm, bn]), P=p)
    # The grid from the launch spec, over the hidden shape parameters.
    assert f"grid ({grid[0]}, {grid[1]}, 1)" in out, out
    expected = np.zeros_like(p)
    expected[:m, :n] = x[:, :n]
    np.testing.assert_array_equal(p, expected)
    np.testing.assert_array_equal(y[:m, :n], (2 * x[:, :n]).astype(np.float16))
    assert (y[:m, n:] == -7).all() and (y[m:] == -7).all(), "wrote outside [M, N]"


@pytest.mark.parametrize("m, n, k", [(40, 24, 70), (5, 3, 9)])
def test_matmul_loops_over_k(interp, m, n, k):
    bm, bn, bk = 16, 16, 32
    rng = np.random.RandomState(m + n + k)
    # Rows padded to whole 16 bytes (8 fp16), the padding never read.
    lda, ldb, ldc = cdiv(k, 8) * 8, cdiv(n, 8) * 8 + 8, 24
    a = np.full((m, lda), 1000.0, np.float16)
    a[:, :k] = rng.randn(m, k)
    b = np.full((k, ldb), 1000.0, np.float16)
    b[:, :n] = rng.randn(k, n)
    c = np.full((m, ldc), np.nan, np.float16)
    interp(matmul_desc, matmul_signature(bm, bn, bk), {"BM": bm, "BN": bn, "BK": bk},
           (cdiv(m, bm), cdiv(n, bn)),
           a_desc=TensorDescriptor(a, [m, k], [lda, 1], [bm, bk]),
           b_desc=TensorDescriptor(b, [k, n], [ldb, 1], [bk, bn]),
           c_desc=TensorDescriptor(c, [m, n], [ldc, 1], [bm, bn]))
    a64, b64 = a[:, :k].astype(np.float64), b[:, :n].astype(np.float64)
    ref = a64 @ b64
    # One rounding to fp16, plus the fp32 accumulation's error.
    bound = 2.0**-11 * np.abs(ref) + k * 2.0**-24 * (np.abs(a64) @ np.abs(b64)) + 1e-6
    assert (np.abs(c[:, :n].astype(np.float64) - ref) <= bound).all()
    assert np.isnan(c[:, n:]).all(), "wrote past N"


def test_tile_run_holds_the_hidden_parameters_to_their_promises(tmp_path, interp):
    # Given by name, past Python's checks: the runtime still refuses a
    # stride that breaks the divisibility the kernel was compiled for.
    x = np.zeros((4, 32), np.float32)
    with pytest.raises(AssertionError, match=r"x_desc__stride0 \(i64\) was compiled for "
                                             r"multiples of 4, but it is 30"):
        interp(copy_desc, COPY_SIGNATURE, COPY_CONSTEXPRS,
               x_desc__base=x, x_desc__shape0=4, x_desc__shape1=30, x_desc__stride0=30,
               y_desc=TensorDescriptor(x.astype(np.float16), [4, 32], [32, 1], [16, 32]),
               P=np.zeros((16, 32), np.float32))


# -- the launch path (tile.runtime; no GPU) -------------------------------------

def runtime_library_built():
    try:
        runtime.library()
    except runtime.RuntimeLibraryError:
        return False
    return True


class FakeTensor:
    """What TensorDescriptor reads of a torch tensor: dtype, shape, stride()
    and data_ptr()."""

    def __init__(self, dtype, shape, strides, address):
        self.dtype, self.shape, self._strides, self._address = dtype, shape, strides, address

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self._address


@pytest.fixture
def copy_kernel(tmp_path, tile_compile):
    if not runtime_library_built():
        pytest.skip("libtile_runtime.so is not built (./dev.sh build)")
    module = tmp_path / "copy_desc.mlir"
    module.write_text(compile_kernel(copy_desc, COPY_SIGNATURE, COPY_CONSTEXPRS))
    compiled = subprocess.run([tile_compile, str(module), "--emit=metadata"],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    kernel, = runtime.Bundle(tmp_path).kernels
    return kernel


X = FakeTensor("torch.float32", (37, 50), (52, 1), 0x7F0000000000)
Y = FakeTensor("torch.float16", (37, 50), (56, 1), 0x7F0000100000)


def copy_values(**overrides):
    values = {"x_desc": TensorDescriptor.from_tensor(X, [16, 32]),
              "y_desc": TensorDescriptor.from_tensor(Y, block_shape=[16, 32]),
              "P": DevicePointer(0x7F0000200000, "fp32")}
    values.update(overrides)
    return values


def test_a_launch_expands_descriptors(copy_kernel):
    assert copy_kernel.arguments == ["x_desc", "y_desc", "P"]
    assert copy_kernel.descriptors["y_desc"].hidden == [
        "y_desc__base", "y_desc__shape0", "y_desc__shape1", "y_desc__stride0"]
    # The grid of the launch spec, computed from the hidden shape.
    assert copy_kernel.check(copy_values()) == (2, 3, 1)
    expanded = copy_kernel._expand_descriptors(copy_values())
    assert expanded["x_desc__base"].address == 0x7F0000000000
    assert expanded["x_desc__base"].element_type == "fp32"
    assert [expanded[f"x_desc__{n}"] for n in ("shape0", "shape1", "stride0")] == [37, 50, 52]
    # A DevicePointer base, and the hidden parameters given by name.
    base = DevicePointer(0x7F0000000000, "fp32")
    assert copy_kernel.check(copy_values(
        x_desc=TensorDescriptor(base, [37, 50], [52, 1], [16, 32]))) == (2, 3, 1)
    by_name = copy_values(x_desc__base=base, x_desc__shape0=100, x_desc__shape1=64,
                          x_desc__stride0=64)
    del by_name["x_desc"]
    assert copy_kernel.check(by_name) == (2, 7, 1)


def test_torch_tensors(copy_kernel):
    torch = pytest.importorskip("torch")
    x = torch.zeros(37, 56)
    desc = tile.TensorDescriptor.from_tensor(x[:, :50], [16, 32])
    assert (desc.shape, desc.strides, desc.element_type) == ([37, 50], [56, 1], "fp32")
    y = torch.zeros(37, 50, dtype=torch.float16)
    # A column view of y: rows of 50 fp16 (100 bytes) are no 16 bytes' multiple.
    with pytest.raises(ValueError, match=r"y_desc .*: stride\[0\] = 50 elements \(100 bytes\)"):
        copy_kernel.check(copy_values(x_desc=desc,
                                      y_desc=tile.TensorDescriptor.from_tensor(y, [16, 32])))


@pytest.mark.parametrize("overrides, message", [
    ({"x_desc": TensorDescriptor(X, [37, 50], [52, 1], [16, 16])},
     r"copy_desc: parameter x_desc \(tensordesc<fp32\[16, 32\]>\) was compiled for blocks of "
     r"\[16, 32\]; the descriptor's block shape is \[16, 16\]"),
    ({"x_desc": TensorDescriptor(Y, [37, 50], [56, 1], [16, 32])},
     r"parameter x_desc .* takes fp32 elements; the descriptor's base holds fp16"),
    ({"x_desc": TensorDescriptor(X, [37, 50], [52, 2], [16, 32])},
     r"parameter x_desc .*: the last stride must be 1 .*, got strides \[52, 2\]"),
    ({"x_desc": TensorDescriptor(FakeTensor("torch.float32", (37, 50), (52, 1),
                                            0x7F0000000004), [37, 50], [52, 1], [16, 32])},
     r"parameter x_desc .*: the base address 0x7f0000000004 is not 16-byte aligned"),
    ({"x_desc": TensorDescriptor(X, [37, 50], [50, 1], [16, 32])},
     r"parameter x_desc .*: stride\[0\] = 50 elements \(200 bytes\) is not a multiple of 16"),
    ({"x_desc": TensorDescriptor(X, [1, 37, 50], [0, 52, 1], [1, 16, 32])},
     r"parameter x_desc .* has rank 2; the descriptor has shape \[1, 37, 50\]"),
    ({"x_desc": TensorDescriptor(X, [37, 50], [52, 1], [16, 32], padding="nan")},
     r"parameter x_desc .* reads zeros outside the tensor; the descriptor asks for "
     r"padding 'nan'"),
    ({"x_desc": TensorDescriptor(X, [2**31, 50], [52, 1], [16, 32])},
     r"parameter x_desc .*: shape\[0\] = 2147483648 is outside \[0, 2\*\*31\)"),
    ({"x_desc": DevicePointer(0x7F0000000000, "fp32")},
     r"parameter x_desc .* takes a tile.TensorDescriptor, not DevicePointer"),
    ({"P": TensorDescriptor.from_tensor(X, [16, 32])},
     r"copy_desc: P is given a tile.TensorDescriptor, but it is a \*fp32 parameter; only "
     r"tensordesc<...> parameters take one \(x_desc, y_desc\)"),
    ({"Q": TensorDescriptor.from_tensor(X, [16, 32])}, "Q .* but it is no parameter"),
    ({"x_desc__shape0": 5}, "x_desc__shape0 is given, and the descriptor x_desc gives it too"),
    ({"x_desc": TensorDescriptor(np.zeros((37, 52), np.float32) if np else X,
                                 [37, 50], [52, 1], [16, 32])},
     r"parameter x_desc: the descriptor's base, a ndarray, has no device address"),
])
def test_descriptors_that_do_not_fit_are_refused(copy_kernel, overrides, message):
    if np is None and "ndarray" in message:
        pytest.skip("numpy is needed for this case")
    with pytest.raises(ValueError, match=message):
        copy_kernel.check(copy_values(**overrides))


def test_missing_descriptors_are_named(copy_kernel):
    values = copy_values()
    del values["y_desc"]
    with pytest.raises(ValueError, match=r"copy_desc takes \['x_desc', 'y_desc', 'P'\]; "
                                         r"missing \['y_desc'\]"):
        copy_kernel.check(values)
    values["y_desc__base"] = DevicePointer(0x7F0000100000, "fp16")
    with pytest.raises(ValueError, match=r"missing \['y_desc__shape0', 'y_desc__shape1', "
                                         r"'y_desc__stride0'\]"):
        copy_kernel.check(values)


@pytest.mark.parametrize("args, error, message", [
    (([1, 2], [2], [1, 1]), ValueError, r"strides \[2\] for shape \[1, 2\]"),
    (([], [], []), ValueError, "1 to 5 dimensions"),
    (([1.5], [1], [16]), TypeError, "shape must be integers, got 1.5"),
    (("ab", [1], [16]), TypeError, "shape must be a sequence of integers"),
])
def test_the_class_checks_its_form(args, error, message):
    with pytest.raises(error, match=message):
        TensorDescriptor(X, *args)


# -- the GPU lowering ----------------------------------------------------------

def compile_ptx(tmp_path, tile_compile, fn, signature, constexprs, **options):
    module = tmp_path / f"{fn.__name__}.mlir"
    module.write_text(compile_kernel(fn, signature, constexprs,
                                     options=CompileOptions(**options)))
    compiled = subprocess.run([tile_compile, str(module), "--emit=ptx"], capture_output=True,
                              text=True)
    assert compiled.returncode == 0, compiled.stderr
    gpu = json.loads(module.with_suffix(".json").read_text())["gpu"]
    assert "unsupported" not in gpu, gpu
    return gpu, module.with_suffix(".ptx").read_text()


# A TMA copy into shared memory (a store's goes the other way).
TMA_LOAD = re.compile(r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global")


def test_gemm_with_descriptors_lowers_for_sm90a(tmp_path, tile_compile):
    gpu, ptx = compile_ptx(tmp_path, tile_compile, matmul_desc, matmul_signature(128, 128, 64),
                           {"BM": 128, "BN": 128, "BK": 64}, target="sm_90a", num_stages=3)
    assert "wgmma.mma_async" in ptx
    for tensormap in gpu.get("tensormaps", []):
        # Descriptors of the hidden parameters, as the runtime evaluates them.
        assert tensormap["base"].endswith("__base"), tensormap
        assert all(re.fullmatch(r"[abc]_desc__(shape|stride)\d", e)
                   for e in tensormap["dims"] + tensormap["strides"]), tensormap
    # Each desc.load makes its block pointer inside the loop, at offsets
    # linear in k: tilegpu-pipeline carries it, and copies its loads ahead
    # by the TMA.
    assert TMA_LOAD.search(ptx)
    assert len(gpu["tensormaps"]) >= 2


@tile.jit
def _matmul_block_ptrs(A, M, K, sa, B, K2, N, sb, C, M2, N2, sc, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr):
    """The GEMM over parameters of the hidden parameters' types, through
    block pointers the loop advances."""
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    a = tl.make_block_ptr(A, (M, K), (sa, 1), (om, 0), (BM, BK), (1, 0))
    b = tl.make_block_ptr(B, (K2, N), (sb, 1), (0, on), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a, boundary_check=(0, 1)), tl.load(b, boundary_check=(0, 1)),
                     acc)
        a = tl.advance(a, (0, BK))
        b = tl.advance(b, (BK, 0))
    c = tl.make_block_ptr(C, (M2, N2), (sc, 1), (om, on), (BM, BN), (1, 0))
    tl.store(c, acc.to(tl.float16), boundary_check=(0, 1))


def test_the_hidden_parameters_qualify_for_the_tma(tmp_path, tile_compile):
    """A descriptor's hidden parameters (*fp16:16, i32 shapes, i64:8
    strides) are what the TMA needs: a loop that meets the pipeliner's
    conditions over them copies by the TMA at num_stages=3."""
    hidden = "*fp16:16,i32,i32,i64:8"
    gpu, ptx = compile_ptx(tmp_path, tile_compile, _matmul_block_ptrs,
                           ",".join([hidden] * 3), {"BM": 128, "BN": 128, "BK": 64},
                           target="sm_90a", num_stages=3)
    assert TMA_LOAD.search(ptx), "no TMA copy"
    loads = [t for t in gpu["tensormaps"] if t["base"] in ("A", "B")]
    assert [(t["base"], t["dims"], t["strides"]) for t in loads] == [
        ("A", ["K", "M"], ["sa"]), ("B", ["N", "K2"], ["sb"])]


# -- kernel[grid](...) from PyTorch -------------------------------------------

@pytest.mark.usefixtures("launcher_tools")
@pytest.mark.parametrize("m, n, k", [(40, 24, 70), (5, 3, 9)])
def test_kernel_grid_takes_host_descriptors(m, n, k):
    """matmul_desc launched as Triton launches it, descriptors from
    tile.tools.tensor_descriptor (Triton's module, its name changed) over
    CPU tensors: the interpreter, against the float64 product."""
    torch = pytest.importorskip("torch")
    from tile.tools.tensor_descriptor import TensorDescriptor as Ported
    bm, bn, bk = 16, 16, 32
    torch.manual_seed(m + n + k)
    # Rows padded to whole 16 bytes, the padding never read.
    a = torch.full((m, cdiv(k, 8) * 8), 1000.0, dtype=torch.float16)[:, :k]
    a.copy_(torch.randn(m, k))
    b = torch.randn(k, cdiv(n, 8) * 8 + 8).to(torch.float16)[:, :n]
    c_rows = torch.full((m, 24), -7.0, dtype=torch.float16)
    c = c_rows[:, :n]
    matmul_desc[(cdiv(m, bm), cdiv(n, bn))](
        Ported.from_tensor(a, [bm, bk]), Ported.from_tensor(b, [bk, bn]),
        Ported.from_tensor(c, [bm, bn]), BM=bm, BN=bn, BK=bk)
    reference = a.double() @ b.double()
    assert ((c.double() - reference).abs() / (reference.abs() + 1)).max() < 2e-3
    assert (c_rows[:, n:] == -7).all(), "wrote past N"


@tile.jit
def _load_one_block(x_desc, Y, B: tl.constexpr):
    tl.store(Y + tl.arange(0, B), x_desc.load([0]))


@tile.jit
def _load_row_block(x_desc, Y, B: tl.constexpr):
    tl.store(Y + tl.arange(0, B)[None, :], x_desc.load([1, 0]))


@pytest.mark.usefixtures("launcher_tools")
def test_kernel_grid_checks_host_descriptors():
    torch = pytest.importorskip("torch")
    y = torch.zeros(16)
    x = torch.arange(20, dtype=torch.float32)
    with pytest.raises(TypeError, match="parameter x_desc is given a TensorDescriptor of "
                                        ".*; its base must be a torch.Tensor"):
        _load_one_block[(1,)](TensorDescriptor(DevicePointer(0, "fp32"), [20], [1], [16]),
                              y, B=16)
    # Checked as a GPU launch checks it.
    rows = torch.zeros(3, 10)
    with pytest.raises(ValueError, match="stride\\[0\\] = 10 elements \\(40 bytes\\) is not "
                                         "a multiple of 16 bytes"):
        _load_row_block[(1,)](TensorDescriptor(rows, [3, 10], [10, 1], [1, 16]), y, B=16)
    _load_one_block[(1,)](TensorDescriptor.from_tensor(x, [16]), y, B=16)
    assert torch.equal(y, x[:16])
    # Rows of 12 fp32 (48 bytes): row 1's 10 elements, zeros past them.
    rows = torch.arange(36, dtype=torch.float32).view(3, 12)
    _load_row_block[(1,)](TensorDescriptor(rows, [3, 10], [12, 1], [1, 16]), y, B=16)
    assert torch.equal(y, torch.cat([rows[1, :10], torch.zeros(6)]))
