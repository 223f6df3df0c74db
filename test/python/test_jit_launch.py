"""kernel[grid](...) from PyTorch (tile/launcher.py): Triton's tutorial
kernels (examples/pytorch_launch.py) on CPU tensors, which run on the
interpreter, against float64 references at sizes that are not multiples
of the blocks; the specialisation, the per-process cache, the grid and the
errors."""

import json
import os

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from conftest import REPO  # noqa: E402
from tile import launcher  # noqa: E402
from tile.compile import load_module  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

EXAMPLE = load_module(os.path.join(REPO, "examples", "pytorch_launch.py"))
NARROW = load_module(os.path.join(REPO, "examples", "narrow_accumulator.py"))

pytestmark = pytest.mark.usefixtures("launcher_tools")


def fresh(kernel):
    """The same kernel with an empty per-process cache."""
    return tile.jit(kernel.fn, do_not_specialize=kernel.do_not_specialize)


# -- the tutorials' kernels -------------------------------------------------


def test_vector_add_masked_tail():
    torch.manual_seed(0)
    n = 1000   # not a multiple of BLOCK_SIZE
    x, y = torch.rand(n), torch.rand(n)
    out = torch.full((n,), float("nan"))
    EXAMPLE.add_kernel[(tile.cdiv(n, 128),)](x, y, out, n, BLOCK_SIZE=128)
    reference = x.double() + y.double()
    assert torch.allclose(out.double(), reference, rtol=1e-7, atol=0)


def test_vector_add_bf16_and_the_grid_function():
    torch.manual_seed(1)
    x = torch.randn(777).to(torch.bfloat16)
    y = torch.randn(777).to(torch.bfloat16)
    out = EXAMPLE.add(x, y)
    assert out.dtype == torch.bfloat16
    # One rounding of the exact sum to bf16.
    assert torch.allclose(out.double(), x.double() + y.double(), rtol=2**-8, atol=0)


@pytest.mark.parametrize("num_stages", [1, 2])
def test_fused_softmax_rows_with_a_mask(num_stages):
    torch.manual_seed(2)
    x = torch.randn(37, 300) * 4   # 300 columns in a block of 512; 37 rows on 8 programs
    y = EXAMPLE.softmax(x, programs=8, num_stages=num_stages)
    reference = torch.softmax(x.double(), dim=1)
    assert (y.double() - reference).abs().max().item() < 1e-6


def test_softmax_of_strided_rows():
    torch.manual_seed(3)
    full = torch.randn(20, 160)
    x = full[:, 8:108]   # rows 160 apart, 100 columns: no copy
    y = EXAMPLE.softmax(x, programs=5)
    reference = torch.softmax(x.double(), dim=1)
    assert (y.double() - reference).abs().max().item() < 1e-6


@pytest.mark.parametrize("m, n, k", [(70, 50, 45), (33, 65, 17)])
def test_matmul_with_dot_at_ragged_shapes(m, n, k):
    torch.manual_seed(4)
    a = torch.randn(m, k).to(torch.float16)
    b = torch.randn(k, n).to(torch.float16)
    c = EXAMPLE.matmul(a, b, block_m=32, block_n=32, block_k=16)
    reference = a.double() @ b.double()
    # fp16 products summed in fp32, then one rounding to fp16.
    error = ((c.double() - reference).abs() / (reference.abs() + 1)).max().item()
    assert error < 2e-3


@pytest.mark.parametrize("dtype, ulp", [(torch.float16, 2**-10), (torch.bfloat16, 2**-7)])
def test_dot_with_a_narrower_out_dtype(dtype, ulp):
    # examples/narrow_accumulator.py: each step's product summed exactly
    # (fp32 for 16 products of 16-bit floats) and rounded once to the
    # result's type: against float64 steps rounded so, within one
    # rounding's flip.
    torch.manual_seed(6)
    m, n, k, block_k = 29, 19, 40, 16
    a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    c = NARROW.launch_matmul(a, b, block=block_k)
    assert c.dtype == dtype
    stepped = torch.zeros(m, n, dtype=dtype)
    for k0 in range(0, k, block_k):
        step = a[:, k0:k0 + block_k].double() @ b[k0:k0 + block_k].double()
        stepped = (stepped.double() + step).to(dtype)
    assert torch.allclose(c.double(), stepped.double(), rtol=ulp, atol=1e-6)
    # Not the product rounded once: the steps' roundings are there.
    assert not torch.equal(c, (a.double() @ b.double()).to(dtype))


@tile.jit
def int8_dot_fp16_out(A, C):
    offs = tl.arange(0, 16)
    a = tl.load(A + offs[:, None] * 16 + offs[None, :])
    tl.store(C + offs[:, None] * 16 + offs[None, :], tl.dot(a, a, out_dtype=tl.float16))


def test_dot_out_dtype_refused_for_int8_and_fp32():
    a = torch.zeros(16, 16, dtype=torch.int8)
    with pytest.raises(CompilationError, match="out_dtype fp16 is not supported for int8 "
                                               "operands; they accumulate in int32\n"):
        int8_dot_fp16_out[(1,)](a, torch.zeros(16, 16, dtype=torch.float16))
    a = torch.zeros(16, 16)
    with pytest.raises(CompilationError, match="out_dtype fp16 is not supported for fp32 "
                                               "operands; they accumulate in fp32\n"):
        int8_dot_fp16_out[(1,)](a, torch.zeros(16, 16, dtype=torch.float16))


def test_matmul_of_a_transposed_operand():
    torch.manual_seed(5)
    a = torch.randn(40, 24).to(torch.float16)
    b = torch.randn(36, 24).to(torch.float16).t()   # strides (1, 24): no constant 1
    c = EXAMPLE.matmul(a, b, block_m=16, block_n=16, block_k=16)
    reference = a.double() @ b.double()
    assert ((c.double() - reference).abs() / (reference.abs() + 1)).max().item() < 2e-3


@pytest.mark.parametrize("m, n, k, num_sms", [(100, 70, 90, 3), (33, 129, 17, 5)])
def test_persistent_matmul(m, n, k, num_sms):
    # Tutorial 09: fewer programs than output tiles, each looping over its
    # share, grouped; against the float64 product.
    torch.manual_seed(m)
    a = torch.randn(m, k).to(torch.float16)
    b = torch.randn(k, n).to(torch.float16)
    c = EXAMPLE.matmul_persistent(a, b, num_sms=num_sms, block_m=32, block_n=32, block_k=16)
    reference = a.double() @ b.double()
    assert ((c.double() - reference).abs() / (reference.abs() + 1)).max().item() < 2e-3


@pytest.mark.parametrize("rows, cols, groups", [(45, 77, 4), (3, 300, 16)])
def test_layer_norm_forward_and_backward_with_locks(rows, cols, groups):
    # Tutorial 05: dW and dB summed into groups' partial sums under locks
    # (tl.atomic_cas spinning in a while loop), against float64 autograd.
    torch.manual_seed(rows)
    x, dy = torch.randn(rows, cols), torch.randn(rows, cols)
    w, b = torch.randn(cols), torch.randn(cols)
    y, mean, rstd = EXAMPLE.layer_norm(x, w, b)
    dx, dw, db = EXAMPLE.layer_norm_backward(dy, x, w, mean, rstd, group_size_m=groups)
    x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
    y64 = torch.nn.functional.layer_norm(x64, (cols,), w64, b64, eps=1e-5)
    y64.backward(dy.double())
    for result, reference in ((y, y64.detach()), (dx, x64.grad), (dw, w64.grad),
                              (db, b64.grad)):
        error = ((result.double() - reference).abs() / (reference.abs() + 1)).max().item()
        assert error < 1e-4


# -- what the interpreter gives back ----------------------------------------


@tile.jit
def scale(X, Y, n, stride, factor, BLOCK: tl.constexpr = 64):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(X + offsets * stride, mask=mask)
    tl.store(Y + offsets * stride, x * factor, mask=mask)


def test_in_place_through_two_arguments():
    x = torch.arange(100, dtype=torch.float32)
    scale[(2,)](x, x, 100, 1, 2.0)
    assert torch.equal(x, torch.arange(100, dtype=torch.float32) * 2)


def test_a_column_of_a_matrix_leaves_the_rest():
    m = torch.arange(60, dtype=torch.float32).reshape(20, 3)
    before = m.clone()
    column = m[:, 1]
    scale[(1,)](column, column, 20, column.stride(0), -1.0)
    assert torch.equal(m[:, 1], -before[:, 1])
    assert torch.equal(m[:, [0, 2]], before[:, [0, 2]])


def test_defaults_and_keywords():
    x = torch.ones(10)
    y = torch.zeros(10)
    scale[(1,)](X=x, Y=y, n=10, stride=1, factor=3.0)   # BLOCK from its default
    assert torch.equal(y, torch.full((10,), 3.0))


# -- specialisation ---------------------------------------------------------


def test_specialisation_follows_triton():
    @tile.jit(do_not_specialize=["c"])
    def kernel(P, Q, a, b, c, d, e, f, g, h, B: tl.constexpr):
        pass

    base = torch.zeros(64, dtype=torch.float16)
    spec, meta = launcher.specialise(
        kernel, (base, base[1:], 1, 32, 1, 2**40 + 1, 0.5, True, None, 17), {"B": 4})
    assert spec.signature == ["*fp16:16", "*fp16", "i32:16", "i32", "i64", "fp32", "i1",
                              "i32"]
    assert spec.constants == {"a": 1, "g": None}
    assert spec.constexprs == {"B": 4}
    assert [name for name, _ in spec.arguments] == ["P", "Q", "b", "c", "d", "e", "f", "h"]
    assert meta["B"] == 4 and meta["h"] == 17


def test_do_not_specialize_by_index_and_options():
    @tile.jit(do_not_specialize=[0, "n"])
    def kernel(X, n, BLOCK: tl.constexpr):
        pass

    spec, meta = launcher.specialise(kernel, (torch.zeros(8), 32),
                                     {"BLOCK": 8, "num_warps": 8, "num_stages": 3})
    assert spec.signature == ["*fp32", "i32"]
    assert (spec.options.num_warps, spec.options.num_stages) == (8, 3)
    assert meta["num_warps"] == 8
    with pytest.raises(TypeError, match="'BLOCK' is no run-time parameter"):
        tile.jit(kernel.fn, do_not_specialize=["BLOCK"])


def test_the_constant_one_is_no_parameter():
    kernel = fresh(scale)
    x = torch.arange(8, dtype=torch.float32)
    kernel[(1,)](x, x, 8, 1, 2.0)
    (compiled,) = kernel._launch_cache.values()
    with open(compiled.metadata) as f:
        text = f.read()
    assert '"constants"' in text and '"stride"' not in text.split('"constants"')[0]


# -- caching ----------------------------------------------------------------


@pytest.fixture
def counted(monkeypatch):
    """Counts the frontend's and the driver's compilations."""
    counts = {"frontend": 0, "driver": 0}
    compile_kernel, run_tile_compile = launcher.compile_kernel, launcher.driver.run_tile_compile

    def frontend(*args, **kwargs):
        counts["frontend"] += 1
        return compile_kernel(*args, **kwargs)

    def backend(*args, **kwargs):
        counts["driver"] += 1
        return run_tile_compile(*args, **kwargs)

    monkeypatch.setattr(launcher, "compile_kernel", frontend)
    monkeypatch.setattr(launcher.driver, "run_tile_compile", backend)
    return counts


def test_a_second_call_compiles_nothing(counted):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = torch.rand(1000), torch.rand(1000), torch.empty(1000)
    kernel[(8,)](x, y, out, 1000, BLOCK_SIZE=128)
    assert counted == {"frontend": 1, "driver": 1}
    kernel[(8,)](x, y, out, 1000, BLOCK_SIZE=128)
    # Another size of the same specialisation (not a multiple of 16).
    kernel[(8,)](x, y, out, 999, BLOCK_SIZE=128)
    assert counted == {"frontend": 1, "driver": 1}
    assert torch.allclose(out, x + y)
    # A multiple of 16, another block size, other options: new ones.
    kernel[(8,)](x, y, out, 992, BLOCK_SIZE=128)
    kernel[(4,)](x, y, out, 1000, BLOCK_SIZE=256)
    kernel[(4,)](x, y, out, 1000, BLOCK_SIZE=256, num_warps=8)
    assert counted == {"frontend": 4, "driver": 4}
    assert len(kernel._launch_cache) == 4


def test_grid_function_sees_the_meta_parameters():
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (tile.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)

    x, y, out = torch.rand(300), torch.rand(300), torch.empty(300)
    EXAMPLE.add_kernel[grid](x, y, out, 300, BLOCK_SIZE=64, num_warps=2)
    assert seen["BLOCK_SIZE"] == 64 and seen["n_elements"] == 300
    assert seen["num_warps"] == 2 and seen["x_ptr"] is x
    assert torch.allclose(out, x + y)


def test_cdiv_and_next_power_of_2():
    assert [tile.cdiv(n, 16) for n in (0, 1, 16, 17)] == [0, 1, 1, 2]
    assert [tile.next_power_of_2(n) for n in (0, 1, 2, 3, 1000, 1024)] == \
        [1, 1, 2, 4, 1024, 1024]


# -- errors -----------------------------------------------------------------


def vectors():
    return torch.rand(100), torch.rand(100), torch.empty(100)


def test_wrong_argument_count():
    x, y, out = vectors()
    with pytest.raises(TypeError, match=r"add_kernel\[grid\]\(\.\.\.\): missing a required "
                                        r"argument: 'n_elements'"):
        EXAMPLE.add_kernel[(1,)](x, y, out, BLOCK_SIZE=128)
    with pytest.raises(TypeError, match="too many positional arguments"):
        EXAMPLE.add_kernel[(1,)](x, y, out, 100, 128, 5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_ctas'"):
        EXAMPLE.add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=128, num_ctas=2)
    with pytest.raises(TypeError, match="multiple values for argument 'n_elements'"):
        EXAMPLE.add_kernel[(1,)](x, y, out, 100, n_elements=100, BLOCK_SIZE=128)


def test_arguments_by_keyword_and_options_of_each_call():
    # Parameters by position or keyword, in any order, bind alike; the
    # options (kept once made) are each call's own.
    x, y, _ = vectors()
    first, second = torch.empty(100), torch.empty(100)
    EXAMPLE.add_kernel[(1,)](x, y, first, 100, BLOCK_SIZE=128)
    EXAMPLE.add_kernel[(1,)](BLOCK_SIZE=128, n_elements=100, output_ptr=second, y_ptr=y,
                             x_ptr=x, num_warps=2)
    assert torch.equal(first, x + y) and torch.equal(second, x + y)
    with pytest.raises(ValueError, match="num_warps must be a power of two"):
        EXAMPLE.add_kernel[(1,)](x, y, first, 100, BLOCK_SIZE=128, num_warps=6)
    with pytest.raises(ValueError, match="num_warps must be an integer, got \\[4\\]"):
        EXAMPLE.add_kernel[(1,)](x, y, first, 100, BLOCK_SIZE=128, num_warps=[4])
    # True hashes as 1: an option that takes an integer still refuses it
    # after a call with 1 (and a boolean one refuses 1 after True).
    EXAMPLE.add_kernel[(1,)](x, y, first, 100, BLOCK_SIZE=128, num_warps=1)
    with pytest.raises(ValueError, match="num_warps must be an integer, got True"):
        EXAMPLE.add_kernel[(1,)](x, y, first, 100, BLOCK_SIZE=128, num_warps=True)


def test_unsupported_arguments():
    x, y, out = vectors()
    with pytest.raises(TypeError, match=r"parameter n_elements is given '100' \(str\); a "
                                        r"run-time parameter takes a torch.Tensor"):
        EXAMPLE.add_kernel[(1,)](x, y, out, "100", BLOCK_SIZE=128)
    with pytest.raises(TypeError, match="parameter y_ptr is a tensor of torch.complex64"):
        EXAMPLE.add_kernel[(1,)](x, y.to(torch.complex64), out, 100, BLOCK_SIZE=128)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        EXAMPLE.add_kernel[(1,)](x, y, out, 2**64, BLOCK_SIZE=128)
    with pytest.raises(ValueError, match="num_warps must be a power of two"):
        EXAMPLE.add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=128, num_warps=3)


def test_tensors_on_different_devices():
    x, y, out = vectors()
    with pytest.raises(ValueError, match=r"different devices \(x_ptr, output_ptr on cpu; "
                                         r"y_ptr on meta\)"):
        EXAMPLE.add_kernel[(1,)](x, y.to("meta"), out, 100, BLOCK_SIZE=128)
    meta = torch.empty(100, device="meta")
    with pytest.raises(ValueError, match="the tensors are on meta; Tile launches CUDA "
                                         "tensors on the GPU and runs CPU tensors"):
        EXAMPLE.add_kernel[(1,)](meta, meta, meta, 100, BLOCK_SIZE=128)


@pytest.mark.parametrize("grid, error, message", [
    ((0,), ValueError, r"the grid is \(0,\); its x size must lie in \[1, 2147483647\]"),
    ((1, 70000), ValueError, r"its y size must lie in \[1, 65535\]"),
    ((1, 1, 1, 1), ValueError, "a grid is one to three positive ints"),
    ((), ValueError, "a grid is one to three positive ints"),
    ((2.0,), TypeError, "a grid is one to three positive ints"),
    ((True,), TypeError, "a grid is one to three positive ints"),
    (lambda meta: None, TypeError, "the grid function returned None"),
    (lambda meta: (-1,), ValueError, r"the grid function returned \(-1,\)"),
])
def test_bad_grids(grid, error, message):
    x, y, out = vectors()
    with pytest.raises(error, match=message):
        EXAMPLE.add_kernel[grid](x, y, out, 100, BLOCK_SIZE=128)


def test_a_grid_of_another_type_is_refused_at_once():
    with pytest.raises(TypeError, match="the grid is one to three positive ints or a "
                                        "function of the meta-parameters, not str"):
        EXAMPLE.add_kernel["8"]


def test_calling_the_kernel_says_how_to_launch_it():
    with pytest.raises(RuntimeError, match=r"launch it over a grid, add_kernel\[grid\]"):
        EXAMPLE.add_kernel(1, 2)


def test_missing_tile_run(monkeypatch, tmp_path):
    monkeypatch.setenv("TILE_RUN", str(tmp_path / "tile-run"))
    x, y, out = vectors()
    with pytest.raises(RuntimeError, match="names .*tile-run, which is no executable"):
        EXAMPLE.add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=128)


def test_compile_errors_name_the_kernel_source():
    @tile.jit
    def broken(X, n):
        tl.store(X + tl.arange(0, 16), undefined_name)  # noqa: F821

    with pytest.raises(CompilationError, match=r"test_jit_launch.py:\d+: error: name "
                                               r"'undefined_name' is not defined"):
        broken[(1,)](torch.zeros(16), 16)


def test_out_of_bounds_access_is_reported():
    x = torch.zeros(10)
    with pytest.raises(RuntimeError, match=r"scale\[grid\]\(\.\.\.\) on the interpreter "
                                           r"failed"):
        scale[(1,)](x, x, 64, 1, 1.0)   # n past the tensor's end


# -- ahead of time: warmup, and a machine without tile-compile ----------------


def test_warmup_compiles_gpu_code_and_launches_nothing(counted):
    kernel = fresh(EXAMPLE.add_kernel)
    meta = torch.empty(1000, device="meta")
    compiled = kernel.warmup(meta, meta, meta, 1000, BLOCK_SIZE=128, grid=(8,))
    names = os.listdir(compiled.folder)
    assert "add_kernel.json" in names and "add_kernel.ptx" in names
    with open(compiled.metadata) as f:
        params = json.load(f)["params"]
    assert params[0] == {"name": "x_ptr", "type": "*fp32", "divisibility": 16}
    assert counted == {"frontend": 1, "driver": 1}
    kernel.warmup(meta, meta, meta, 999, BLOCK_SIZE=128)
    assert counted == {"frontend": 1, "driver": 1}


def test_compiled_folders_serve_a_machine_without_tile_compile(monkeypatch, tmp_path):
    x, y, out = vectors()
    fresh(EXAMPLE.add_kernel)[(1,)](x, y, out, 100, BLOCK_SIZE=128)
    monkeypatch.setenv("TILE_COMPILE", str(tmp_path / "absent"))
    out.zero_()
    fresh(EXAMPLE.add_kernel)[(1,)](x, y, out, 100, BLOCK_SIZE=128)
    assert torch.allclose(out, x + y)
    with pytest.raises(RuntimeError, match=r"add_kernel: this specialisation \(\*fp32:16, "
                                           r"\*fp32:16, \*fp32:16, i32\) has not been "
                                           r"compiled for the interpreter in .*tile-compile"):
        fresh(EXAMPLE.add_kernel)[(4,)](x, y, out, 100, BLOCK_SIZE=32)   # no test's


def test_the_documented_example_runs(tmp_path):
    """docs/python-api.md's "Launching from PyTorch" example, as written
    (from a file: the frontend reads a kernel's source)."""
    with open(os.path.join(REPO, "docs", "python-api.md")) as f:
        text = f.read()
    section = text[text.index("## Launching from PyTorch"):]
    start = section.index("```python\n") + len("```python\n")
    example = tmp_path / "launching_from_pytorch.py"
    example.write_text(section[start:section.index("```", start)])
    load_module(str(example))


def test_seeded_dropout_is_philox_and_reproducible():
    """Triton's tutorial 04: the kept elements are those whose tl.rand
    (Philox 4x32-10 of (seed, offset)) exceeds p, scaled by 1 / (1 - p);
    the same seed gives the same output."""
    from test_random import philox_reference, uniform_reference
    torch.manual_seed(4)
    n, p, seed = 1500, 0.3, 2024
    x = torch.randn(n)
    out = EXAMPLE.seeded_dropout(x, p, seed)
    keep = torch.tensor([uniform_reference(philox_reference(seed, i)[0]) > p
                         for i in range(n)])
    assert torch.equal(out, torch.where(keep, x / (1 - p), torch.zeros(())))
    assert torch.equal(EXAMPLE.seeded_dropout(x, p, seed), out)
    assert not torch.equal(EXAMPLE.seeded_dropout(x, p, seed + 1), out)
