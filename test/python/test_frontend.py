"""The frontend: type promotion, loops, branches, helpers, errors."""

import json
import os
import re
import subprocess
import sys

import pytest

import error_kernels
import sample_kernels
import tile
import tile.language as tl
from conftest import PYTHON_DIR, REPO, strip_locs
from tile.compiler import compile_kernel
from tile.compiler.errors import BackendError, CompilationError, UsageError
from tile.compiler.options import CompileOptions
from tile.compiler.semantic import computation_type


def compile_text(fn, signature, **constexprs):
    return compile_kernel(fn, signature, constexprs)


# -- type promotion ---------------------------------------------------------

@pytest.mark.parametrize("a, a_lit, b, b_lit, div, expected", [
    (tl.float16, False, tl.float32, True, False, tl.float16),    # literal adopts tensor type
    (tl.float16, False, tl.int32, True, False, tl.float16),
    (tl.int32, False, tl.float32, True, False, tl.float32),      # float literal lifts ints
    (tl.float16, False, tl.float32, False, False, tl.float32),
    (tl.float16, False, tl.float16, False, True, tl.float32),    # fp16 / fp16 in fp32
    (tl.bfloat16, False, tl.bfloat16, False, False, tl.bfloat16),
    (tl.bfloat16, False, tl.float16, False, False, tl.float16),
    (tl.bfloat16, False, tl.int32, False, False, tl.float32),
    (tl.int32, False, tl.int64, False, False, tl.int64),
    (tl.int1, False, tl.int32, False, False, tl.int32),
    (tl.float8e5, False, tl.float8e4nv, False, False, tl.float16),
    (tl.float64, False, tl.float32, False, False, tl.float64),
])
def test_computation_type(a, a_lit, b, b_lit, div, expected):
    assert computation_type(a, a_lit, b, b_lit, div) == expected
    assert computation_type(b, b_lit, a, a_lit, div) == expected


@pytest.mark.parametrize("op, expected", [
    ("lit_float", r"arith.addf %\d+, %\d+ : tensor<16xf16>"),
    ("lit_int", r"arith.mulf %\d+, %\d+ : tensor<16xf16>"),
    ("scalar", r"arith.extf %\d+ : tensor<16xf16> to tensor<16xf32>"),
    ("tensors", r"arith.addf %\d+, %\d+ : tensor<16xf16>"),
    ("div", r"arith.divf %\d+, %\d+ fastmath<afn> : tensor<16xf32>"),
    # Triton's `/` on fp32 may be approximate; div_rn and fdiv's
    # ieee_rounding divide as IEEE does, and so does fp64's `/`.
    ("div_rn", r"arith.divf %\d+, %\d+ : tensor<16xf32>"),
    ("fdiv_ieee", r"arith.divf %\d+, %\d+ : tensor<16xf32>"),
    ("fdiv", r"arith.divf %\d+, %\d+ fastmath<afn> : tensor<16xf32>"),
    ("div_f64", r"arith.divf %\d+, %\d+ : tensor<16xf64>"),
    ("int_div", r"arith.sitofp %\d+ : tensor<16xi32> to tensor<16xf32>"),
    ("int_float_lit", r"arith.mulf %\d+, %\d+ : tensor<16xf32>"),
    ("int64", r"arith.addi %\d+, %\d+ : tensor<16xi64>"),
    ("floordiv", r"arith.divsi [^\n]*\n(.*\n)*.*arith.remsi"),
])
def test_promotion_in_ir(op, expected, verify):
    text = compile_text(sample_kernels.promote, "*fp16,*fp16,*fp32,fp32,i32", OP=op)
    assert re.search(expected, strip_locs(text)), strip_locs(text)
    verify(text)


def test_literal_keeps_fp16():
    text = strip_locs(compile_text(sample_kernels.promote, "*fp16,*fp16,*fp32,fp32,i32",
                                   OP="lit_float"))
    assert "dense<1.5> : tensor<16xf16>" in text
    # The store converts to the pointee type.
    assert "arith.extf" in text and "tile.store" in text


# -- loops ------------------------------------------------------------------

def test_loop_carried_values(verify):
    text = strip_locs(compile_text(sample_kernels.carried, "*fp32,*fp32,i32"))
    # acc (tensor), total and best (Python floats made fp32) are carried;
    # unused_after and x are loop-local.
    m = re.search(r"scf.for .* iter_args\((.*)\) -> \((.*)\) : i32", text)
    assert m, text
    assert m.group(2) == "tensor<32xf32>, f32, f32"
    assert "arith.constant 0.0 : f32" in text
    assert "arith.constant 0xFF800000 : f32" in text
    verify(text)


def test_names_defined_in_loop_are_local():
    @tile.jit
    def leak(X, n):
        for i in range(0, n):
            inner = i
        tl.store(X, inner)
    with pytest.raises(CompilationError, match="name 'inner' is not defined"):
        compile_kernel(leak, "*i32,i32")


def test_while_loop(verify):
    text = strip_locs(compile_text(sample_kernels.countdown, "*i32,i32"))
    assert re.search(r"scf.while \(.*\) : \(i32, i32\) -> \(i32, i32\)", text), text
    assert "scf.condition" in text
    verify(text)


def test_static_range_unrolls(verify):
    text = strip_locs(compile_text(sample_kernels.shapes, "*fp32,*fp32"))
    assert "scf.for" not in text
    verify(text)


# -- branches ---------------------------------------------------------------

@pytest.mark.parametrize("mode, constant", [(1, "dense<2.0>"), (2, "dense<3.0>")])
def test_constexpr_branch_compiles_one_side(mode, constant, verify):
    text = strip_locs(compile_text(sample_kernels.branches, "*fp32,*fp32,i32", MODE=mode))
    assert constant in text
    other = "dense<3.0>" if constant == "dense<2.0>" else "dense<2.0>"
    assert other not in text
    verify(text)


def test_runtime_if_yields(verify):
    text = strip_locs(compile_text(sample_kernels.branches, "*fp32,*fp32,i32", MODE=1))
    # x and scale are yielded; the conditional expression is another scf.if.
    assert re.search(r"= scf.if %\d+ -> \(tensor<8xf32>, f32\)", text), text
    assert re.search(r"= scf.if %\d+ -> \(tensor<8xf32>\)", text), text
    verify(text)


# -- helpers ----------------------------------------------------------------

def test_helpers_are_inlined_with_callsite_locations(verify):
    text = compile_text(sample_kernels.helpers, "*fp32,*fp32")
    assert "func.call" not in text and text.count("func.func") == 1
    # SCALE = 3, then 4: x * 3 * 4.
    plain = strip_locs(text)
    assert "dense<3.0>" in plain and "dense<4.0>" in plain
    assert 'callsite("test/python/sample_kernels.py"' in text
    verify(text)


def test_block_pointers(verify):
    text = strip_locs(compile_text(sample_kernels.block_pointers, "*fp16,*fp16,i32,i32"))
    assert "tile.load_block %" in text and "boundary_check [0, 1]" in text
    assert re.search(r"iter_args\(.*\) -> \(!tile.block_ptr<tensor<8x16xf16>>, "
                     r"!tile.block_ptr<tensor<8x16xf16>>\)", text), text
    verify(text)


def test_shapes_and_dot(verify):
    text = strip_locs(compile_text(sample_kernels.shapes, "*fp32,*fp32"))
    assert "tile.trans" in text and "tile.expand_dims" in text
    assert "tile.dot %" in text and "-> tensor<4x4xf32>" in text
    verify(text, "-canonicalize")


# -- errors -----------------------------------------------------------------

ERROR_FILE = os.path.join(REPO, "test", "python", "error_kernels.py")
ERROR_DISPLAY = "test/python/error_kernels.py"


def marked_errors():
    """(line, function, expected text) of each marked line of ERROR_FILE."""
    function = None
    with open(ERROR_FILE) as f:
        for number, line in enumerate(f, 1):
            m = re.match(r"(?:async )?def (\w+)\(", line)
            if m:
                function = m.group(1)
            if "# expect-error:" in line:
                yield number, function, line.split("# expect-error:")[1].strip()


def error_line(message):
    return next(n for n, _, text in marked_errors() if text == message)


ERROR_CASES = [
    ("undefined_name", "*fp32", {}),
    ("runtime_arange", "*fp32,i32", {}),
    ("arange_not_power_of_two", "*fp32", {}),
    ("dot_type_mismatch", "*fp16,*fp32", {}),
    ("uses_break", "*fp32,i32", {}),
    ("loop_type_change", "*fp32,i32", {}),
    ("shape_mismatch", "*i32", {}),
    ("assign_element", "*i32", {}),
    ("tensor_condition", "*fp32", {}),
    ("runtime_return", "*i32,i32", {}),
    ("static_assert_fails", "*fp32", {"BLOCK": 48}),
    ("calls_python", "*fp32", {}),
    ("python_min_on_tensor", "*i32,i32", {}),
    ("constexpr_from_runtime", "*i32,i32", {}),
    ("runtime_to_constexpr_param", "*fp32,i32", {}),
    ("bad_pointer_math", "*fp32,*fp32", {}),
    ("float_offset", "*fp32", {}),
    ("atomic_add_fp16", "*fp16", {}),
    ("atomic_xor_float", "*fp32", {}),
    ("atomic_max_scope", "*fp32", {}),
    ("atomic_add_block_pointer", "*fp32", {}),
    ("atomic_add_seq_cst", "*fp32", {}),
    ("atomic_cas_fp16", "*fp16", {}),
    ("atomic_cas_block_pointer", "*i32", {}),
    ("desc_base_not_pointer", "*fp32,i32", {}),
    ("desc_rank_6", "*fp32,i32", {}),
    ("desc_strides_count", "*fp32,i32", {}),
    ("desc_block_not_power_of_two", "*fp32,i32", {}),
    ("desc_block_too_narrow", "*fp32,i32", {}),
    ("desc_last_stride", "*fp32,i32", {}),
    ("desc_runtime_last_stride", "*fp32,i32,i32", {}),
    ("desc_nan_padding_int", "*i32,i32", {}),
    ("desc_offsets_rank", "*fp32,i32", {}),
    ("desc_float_offset", "*fp32,i32", {}),
    ("desc_store_shape", "*fp32,i32", {}),
    ("desc_through_tl_load", "*fp32,i32", {}),
    ("desc_rebound_in_loop", "*fp32,i32", {}),
    ("variadic", "", {}),
    ("asynchronous", "*fp32", {}),
    ("huge_shift", "*i64", {}),
    ("huge_power", "*i64", {}),
    ("huge_static_range", "*i32", {}),
    ("arange_past_int32", "*i32", {}),
    ("huge_zeros", "*fp32", {}),
    ("huge_broadcast", "*i32", {}),
    ("block_ptr_order_none", "*fp32,i32", {}),
    ("permute_order_none", "*fp32", {}),
    ("advance_by_block_pointer", "*fp32,i32", {}),
    ("tile_rebound_to_constant", "*fp32,i32", {"B": 16}),
]


@tile.jit
def _scatter_add(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    old = tl.atomic_add(Y + offs % 4, x, mask=offs < n)
    tl.atomic_add(Y, 1)
    tl.store(X + offs, old, mask=offs < n)


def test_atomic_add():
    text = compile_text(_scatter_add, "*fp32,*fp32,i32", BLOCK=8)
    # The tensor add keeps its mask and gives the old values (stored); the
    # scalar add's integer literal becomes the pointee type.  Triton's
    # default ordering, acq_rel at device scope, is spelled out (the IR's
    # own default is relaxed).
    assert re.search(r"(%\w+) = tile\.atomic_rmw add %\w+, %\w+ mask %\w+ sem acq_rel : "
                     r"tensor<8x!tile\.ptr<f32>>", text), text
    assert re.search(r"= tile\.atomic_rmw add %\w+, %\w+ sem acq_rel : !tile\.ptr<f32>",
                     text), text
    assert re.search(r"arith\.constant 1\.0 : f32", text), text


@tile.jit
def _min_max(X, n, m):
    x = tl.load(X + tl.arange(0, 8))
    tl.store(X + tl.arange(0, 8), max(x, 0.5, min(x, 2.0)))
    tl.store(X, min(n, m, 7).to(tl.float32))


def test_python_min_and_max_of_run_time_values():
    text = compile_text(_min_max, "*fp32,i32,i32")
    # Folded left to right, as Triton does, on tensors and on scalars.
    assert len(re.findall(r"arith\.minsi %\w+, %\w+ : i32", text)) == 2, text
    assert len(re.findall(r"arith\.maxnumf %\w+, %\w+ : tensor<8xf32>", text)) == 2, text
    assert re.search(r"arith\.minnumf %\w+, %\w+ : tensor<8xf32>", text), text


@tile.jit
def _lock(LOCK, X, SEM: tl.constexpr, SCOPE: tl.constexpr):
    while tl.atomic_cas(LOCK, 0, 1, sem="acquire") == 1:
        pass
    tl.atomic_add(X, 1.0, sem=SEM, scope=SCOPE)
    tl.atomic_xchg(LOCK, 0, sem="release", scope="gpu")


@pytest.mark.parametrize("sem, scope, spelled", [
    ("relaxed", "gpu", ""), ("acquire", "cta", " sem acquire scope cta"),
    ("release", "sys", " sem release scope sys"), ("acq_rel", "gpu", " sem acq_rel")])
def test_atomic_orderings(sem, scope, spelled):
    text = compile_text(_lock, "*i32,*fp32", SEM=sem, SCOPE=scope)
    # The compare-and-swap in the loop's condition, the update as asked, the
    # release; relaxed at gpu scope is the IR's default, left out.
    assert re.search(r"scf\.while.*tile\.atomic_cas %\w+, %\w+, %\w+ sem acquire : "
                     r"!tile\.ptr<i32>", text, re.S), text
    # Only there: evaluated once before the loop too, it took the lock.
    assert text.count("tile.atomic_cas") == 1, text
    assert re.search(r"tile\.atomic_rmw add %\w+, %\w+" + re.escape(spelled) +
                     r" : !tile\.ptr<f32>", text), text
    assert re.search(r"tile\.atomic_rmw xchg %\w+, %\w+ sem release : !tile\.ptr<i32>",
                     text), text


def test_every_marked_error_has_a_case():
    assert len(list(marked_errors())) == len(ERROR_CASES)


@pytest.mark.parametrize("kernel, signature, constexprs", ERROR_CASES,
                         ids=[c[0] for c in ERROR_CASES])
def test_error_messages(kernel, signature, constexprs):
    fn = getattr(error_kernels, kernel)
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, signature, constexprs)
    message = str(info.value)
    # The marker sits in the kernel, or in the helper it calls.
    marker_function = {"runtime_return": "_early_return",
                       "runtime_to_constexpr_param": "_needs_constexpr"}.get(kernel, kernel)
    line, text = next((n, t) for n, f, t in marked_errors() if f == marker_function)
    first = message.splitlines()[0]
    assert first.startswith(f"{ERROR_DISPLAY}:{line}: error: "), message
    assert text in first, message


def test_error_in_helper_notes_the_call_site():
    with pytest.raises(CompilationError) as info:
        compile_kernel(error_kernels.runtime_return, "*i32,i32")
    lines = str(info.value).splitlines()
    assert re.match(rf"{ERROR_DISPLAY}:\d+: note: called from here", lines[-1]), lines


def test_branch_type_mismatch_points_at_if():
    with pytest.raises(CompilationError) as info:
        compile_kernel(error_kernels.branch_type_mismatch, "*fp32,i32")
    assert "variable 'v' is fp32 in the then-branch but int32 in the else-branch" \
        in str(info.value)
    assert re.match(rf"{ERROR_DISPLAY}:\d+: error:", str(info.value))


@pytest.mark.parametrize("signature, constexprs, message", [
    ("*fp32", {}, "has 2 run-time parameters (X, n) but the signature gives 1 types"),
    ("*fp32,i32", {"BLOCK": 1}, "has no constexpr parameter 'BLOCK'"),
    ("*fp33,i32", {}, "unknown type '*fp33' in the signature"),
])
def test_usage_errors(signature, constexprs, message):
    with pytest.raises(UsageError) as info:
        compile_kernel(error_kernels.runtime_arange, signature, constexprs)
    assert message in str(info.value)


def test_missing_constexpr_value():
    with pytest.raises(UsageError, match="constexpr parameter 'BLOCK' .* needs a value"):
        compile_kernel(error_kernels.static_assert_fails, "*fp32")


def test_calling_a_kernel_from_python_fails_clearly():
    with pytest.raises(RuntimeError, match="compile it ahead of time"):
        sample_kernels.helpers(1, 2)
    with pytest.raises(RuntimeError, match="only be called inside a @tile.jit"):
        tl.arange(0, 4)


# -- the command line -------------------------------------------------------

@pytest.fixture
def run_cli(tile_compile):
    """Runs python3 -m tile.compile with this checkout's tile and the built
    tile-compile."""
    def run(*args, cwd=REPO):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1",
                   TILE_COMPILE=tile_compile)
        return subprocess.run([sys.executable, "-m", "tile.compile", *args], cwd=cwd,
                              env=env, capture_output=True, text=True)
    return run


FWD_SIGNATURE = ("*fp16,*fp16,*fp16,*fp16,*fp32,fp32," + ",".join(["i32"] * 13)
                 + ",fp32,*i32,*i32,i32,i32,*fp32,fp32,*i64")


def test_persistent_forward_compiles_both_masks():
    """attn_fwd's PERSISTENT: blocks in turn (non-causal), pairs of equal
    work (causal)."""
    from tile.kernels.attention import attn_fwd
    constexprs = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "PERSISTENT": 1}
    for causal in (False, True):
        assert "scf.for" in compile_text(attn_fwd, FWD_SIGNATURE, CAUSAL=causal, **constexprs)


@tile.jit
def _types_of_values(X, Y, n, BLOCK: tl.constexpr):
    # Triton's .type: a pointer's pointee, a tile's shape and scalar.
    tl.static_assert(X.type.element_ty == tl.float32)
    tl.static_assert(Y.type.element_ty == tl.float16)
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.static_assert(x.type.shape == (BLOCK,))
    tl.static_assert(x.type.element_ty == tl.float32 and x.type.scalar == tl.float32)
    tl.static_assert((X + tl.arange(0, BLOCK)).type.element_ty == X.type)
    tl.store(Y + tl.arange(0, BLOCK), x.to(Y.type.element_ty), mask=tl.arange(0, BLOCK) < n)


def test_values_have_tritons_type_attribute():
    text = compile_text(_types_of_values, "*fp32,*fp16,i32", BLOCK=32)
    assert "arith.truncf" in text and "tensor<32xf16>" in text


MATH_KERNEL = """
import tile
import tile.language as tl


@tile.jit
def math_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=1.0)
    y = tl.exp(x) + tl.exp2(x) + tl.log(x) + tl.log2(x) + tl.sqrt(x) + tl.rsqrt(x)
    y = y + tl.sin(x) + tl.cos(x) + tl.tanh(x) + tl.floor(x) + tl.ceil(x) + tl.abs(x)
    y = y + tl.sigmoid(x) + tl.fma(x, x, x) + tl.maximum(x, y) + tl.minimum(x, y)
    y = y + tl.rand(n, offs) + tl.randn(n, offs)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
"""


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_every_math_function_compiles_for_the_gpu(tmp_path, run_cli, dtype):
    """Each tl math function (and the random numbers) lowers to PTX: tl.sin
    and tl.cos once did not (NVPTX has no plain sin and cos)."""
    source = tmp_path / "math_kernel.py"
    source.write_text(MATH_KERNEL)
    result = run_cli(f"{source}:math_kernel", "--signature", f"*{dtype}:16,*{dtype}:16,i32",
                     "--constexpr", "BLOCK=256", "--num-warps", "4", "--emit", "ptx",
                     "-o", str(tmp_path / "math.mlir"))
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "math.ptx").read_text()
    for instruction in ("sin.approx.f32", "cos.approx.f32", "tanh.approx.f32",
                        "ex2.approx", "lg2.approx", "mul.hi.u32"):
        assert instruction in ptx, instruction


def test_cli_writes_module_metadata_and_ptx(tmp_path, verify, run_cli):
    out = tmp_path / "attn_fwd_test.mlir"
    result = run_cli("python/tile/kernels/attention.py:attn_fwd", "--signature",
                     FWD_SIGNATURE, "--constexpr", "HEAD_DIM=64", "--constexpr", "BLOCK_M=128",
                     "--constexpr", "BLOCK_N=64", "--constexpr", "CAUSAL=true",
                     "--num-warps", "4", "--num-stages", "3", "--thread-index-per-op",
                     "--emit", "ptx", "-o", str(out))
    assert result.returncode == 0, result.stderr
    metadata = json.loads((tmp_path / "attn_fwd_test.json").read_text())
    gpu = metadata.pop("gpu")
    assert metadata == {
        "schema_version": 2, "name": "attn_fwd_test", "kernel": "attn_fwd",
        "entry": "attn_fwd", "source": "python/tile/kernels/attention.py",
        "params": [{"name": n, "type": t} for n, t in [
            ("Q", "*fp16"), ("K", "*fp16"), ("V", "*fp16"), ("O", "*fp16"),
            ("LSE", "*fp32"), ("sm_scale", "fp32"), ("stride_z", "i32"),
            ("stride_h", "i32"), ("stride_n", "i32"), ("stride_kz", "i32"),
            ("stride_kh", "i32"), ("stride_kn", "i32"), ("Z", "i32"), ("H", "i32"),
            ("H_KV", "i32"), ("N_CTX", "i32"), ("N_KV", "i32"), ("causal_offset", "i32"),
            ("window_offset", "i32"), ("softcap", "fp32"), ("CU_SEQLENS_Q", "*i32"),
            ("CU_SEQLENS_K", "*i32"), ("MAX_N_CTX", "i32"), ("VARLEN", "i32"),
            ("ALIBI_SLOPES", "*fp32"), ("dropout_p", "fp32"), ("DROPOUT_SEEDS", "*i64")]],
        # WINDOW, SOFTCAP, HEAD_GROUP, RESCALE_VOTE, ALIBI, DROPOUT,
        # PERSISTENT, ROW_SUM_PARTS and BLOCK_D were not given: their
        # defaults are recorded.
        "constexprs": {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": True,
                       "WINDOW": False, "SOFTCAP": False, "HEAD_GROUP": 8,
                       "RESCALE_VOTE": True, "ALIBI": False, "DROPOUT": False,
                       "PERSISTENT": 0, "ROW_SUM_PARTS": 0, "BLOCK_D": 0},
        "num_warps": 4,
        "options": CompileOptions(num_warps=4, num_stages=3,
                                  thread_index_per_op=True).pipeline_string(),
        # Declared beside the kernel (@tile.jit(launch=...)).
        "launch": {"grid": ["cdiv(MAX_N_CTX, BLOCK_M)", "Z * H"],
                   "keys": ["HEAD_DIM", "CAUSAL", "WINDOW", "SOFTCAP", "ALIBI",
                            "DROPOUT"],
                   "length": "MAX_N_CTX"}}
    assert gpu["ptx"] == "attn_fwd_test.ptx" and gpu["target"] == "sm_90a"
    assert gpu["shared_bytes"] > 0 and "cubin" not in gpu
    assert ".entry attn_fwd(" in (tmp_path / "attn_fwd_test.ptx").read_text()
    text = out.read_text()
    assert "func.func @attn_fwd(" in text
    assert 'loc("Q"("python/tile/kernels/attention.py":' in text
    assert 'tile.options = "bulk-reductions=false distribute-disjoint-constants=true' in text
    verify(text)


def test_cli_emit_ir_writes_the_module_alone(tmp_path, run_cli):
    out = tmp_path / "vector_add.mlir"
    result = run_cli("examples/vector_add.py:vector_add", "--signature",
                     "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK=256",
                     "--emit", "ir", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vector_add.mlir"]
    printed = run_cli("examples/vector_add.py:vector_add", "--signature",
                      "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK=256",
                      "--emit", "ir", "-o", "-")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == out.read_text()
    refused = run_cli("examples/vector_add.py:vector_add", "--signature",
                      "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK=256",
                      "-o", "-")
    assert refused.returncode == 1
    assert "-o - prints the tile IR: it goes with --emit ir" in refused.stderr


def test_cli_reports_errors_without_traceback(tmp_path, run_cli):
    result = run_cli("test/python/error_kernels.py:undefined_name", "--signature", "*fp32",
                     "-o", str(tmp_path / "x.mlir"))
    assert result.returncode == 1
    line = error_line("name 'y' is not defined")
    assert result.stderr.startswith(
        f"{ERROR_DISPLAY}:{line}: error: name 'y' is not defined"), result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.mlir").exists()


@pytest.mark.parametrize("statement, message", [
    ("import sys\nsys.exit(0)", "it exited (sys.exit(0)) at import"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
])
def test_cli_reports_a_file_that_exits_at_import(tmp_path, run_cli, statement, message):
    source = tmp_path / "exits.py"
    source.write_text(statement + "\n")
    result = run_cli(f"{source}:kernel", "--signature", "*fp32", "-o", str(tmp_path / "x.mlir"))
    assert result.returncode == 1
    assert f"error: importing {source} failed: " in result.stderr, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_usage_error(tmp_path, run_cli):
    result = run_cli("python/tile/kernels/softmax.py:softmax_v1", "--signature", "*fp32",
                     "-o", str(tmp_path / "x.mlir"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: kernel 'softmax_v1' has 6 run-time parameters")
    assert "Traceback" not in result.stderr


def test_cli_version(run_cli):
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"tile {tile.__version__}"


def test_cli_manifest_writes_every_variant(tmp_path, verify, run_cli):
    from tile.kernels import manifest
    result = run_cli("--manifest", "--out-dir", str(tmp_path), "--emit", "metadata")
    assert result.returncode == 0, result.stderr
    names = {v.name for v in manifest.VARIANTS}
    assert {p.stem for p in tmp_path.glob("*.mlir")} == names
    assert {p.stem for p in tmp_path.glob("*.json")} == names
    assert not list(tmp_path.glob("*.ptx")), "--emit metadata lowers nothing"
    for variant in manifest.VARIANTS:
        metadata = json.loads((tmp_path / f"{variant.name}.json").read_text())
        assert metadata["name"] == metadata["entry"] == variant.name
        assert metadata["kernel"] == variant.kernel
        assert metadata["num_warps"] == variant.options.num_warps
        assert metadata["options"] == variant.options.pipeline_string()
        assert metadata["constexprs"] == variant.constexprs
        assert metadata.get("max_n_ctx") == variant.max_n_ctx
        declared = [
            p["type"] + (f":{p['divisibility']}" if "divisibility" in p else "")
            for p in metadata["params"]]
        assert declared == variant.signature.split(",")
        verify((tmp_path / f"{variant.name}.mlir").read_text())


def test_manifest_covers_the_required_variants():
    from tile.kernels import manifest
    names = set(manifest.BY_NAME)
    for t in ("fp16", "bf16"):
        for d in (64, 128):
            assert f"attn_bwd_preprocess_{t}_d{d}" in names
            for c in ("causal", "noncausal"):
                assert f"attn_fwd_{t}_d{d}_{c}" in names
                assert f"attn_bwd_{t}_d{d}_{c}" in names
        assert f"matmul_{t}" in names
    for name in ("softmax_v2", "softmax_v3", "softmax_v4", "flash_attn_puzzle"):
        assert name in names
    assert len([n for n in names if n.startswith("softmax_v1_")]) >= 3


def test_manifest_overrides(tmp_path, run_cli):
    # --set changes the named constexprs and options of the variants
    # compiled (block-size sweeps), and nothing else.
    from tile.kernels import manifest
    shipped = manifest.BY_NAME["attn_bwd_fp16_d128_causal"]
    result = run_cli("--manifest", "--out-dir", str(tmp_path), "--only",
                     "attn_bwd_fp16_d128_causal", "--set", "BLOCK_M1=32",
                     "--set", "num_warps=4", "--set", "thread_index_per_op=false",
                     "--emit", "metadata")
    assert result.returncode == 0, result.stderr
    metadata = json.loads((tmp_path / "attn_bwd_fp16_d128_causal.json").read_text())
    assert metadata["constexprs"] == dict(shipped.constexprs, BLOCK_M1=32)
    assert metadata["num_warps"] == 4
    assert metadata["options"] == shipped.options.replace(
        num_warps=4, thread_index_per_op=False).pipeline_string()
    # The d128 backward copies along 128-byte runs of its rows; --set
    # lifts that, for sweeps.
    assert shipped.options.max_row_span == 128
    result = run_cli("--manifest", "--out-dir", str(tmp_path), "--only",
                     "attn_bwd_fp16_d128_causal", "--set", "max_row_span=0",
                     "--emit", "metadata")
    assert result.returncode == 0, result.stderr
    metadata = json.loads((tmp_path / "attn_bwd_fp16_d128_causal.json").read_text())
    assert "max-row-span=0" in metadata["options"]


def test_cli_records_options(tmp_path, run_cli):
    out = tmp_path / "vector_add.mlir"
    result = run_cli("examples/vector_add.py:vector_add", "--signature",
                     "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK=256",
                     "--max-row-span", "64", "--target", "sm_80", "--no-fp-fusion",
                     "--emit", "metadata", "-o", str(out))
    assert result.returncode == 0, result.stderr
    options = CompileOptions(max_row_span=64, target="sm_80", fp_fusion=False)
    assert json.loads((tmp_path / "vector_add.json").read_text())["options"] == \
        options.pipeline_string()
    assert f'tile.options = "{options.pipeline_string()}"' in out.read_text()
    result = run_cli("examples/vector_add.py:vector_add", "--signature",
                     "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK=256",
                     "--max-row-span", "-16", "-o", str(out))
    assert result.returncode == 1
    assert "max_row_span must be a non-negative number of bytes (0: no limit), got -16" \
        in result.stderr


@pytest.mark.parametrize("setting, message", [
    ("BLOCK_Q=32", "--set BLOCK_Q: variant attn_bwd_fp16_d64_causal has no such constexpr "
                   "or option"),
    ("num_warps=0", "--set: num_warps must be a power of two from 1 to 32, got 0"),
    ("thread_index_per_op=1", "--set: thread_index_per_op must be True or False, got 1"),
    ("max_row_span=-8", "--set: max_row_span must be a non-negative number of bytes"),
    ("target=sm_70", "--set: target must be one of sm_80, sm_90a, got 'sm_70'"),
    ("BLOCK_M1", "--set expects NAME=VALUE"),
])
def test_manifest_override_errors(tmp_path, setting, message, run_cli):
    result = run_cli("--manifest", "--out-dir", str(tmp_path), "--only",
                     "attn_bwd_fp16_d64_causal", "--set", setting)
    assert result.returncode == 1
    assert message in result.stderr, result.stderr


@pytest.mark.parametrize("flags", [["--set", "BLOCK=64"], ["--only", "softmax_v2"],
                                   ["--tuning", "autotune.json"], ["--list"],
                                   ["--out-dir", "kernels"]])
def test_manifest_flags_are_refused_without_manifest(flags, run_cli):
    # Ignoring them would compile something other than what was asked.
    result = run_cli("examples/vector_add.py:vector_add", "--signature", "*fp32", *flags)
    assert result.returncode == 2
    assert f"{flags[0]}: only with --manifest" in result.stderr, result.stderr


def test_option_flags_are_refused_with_manifest(tmp_path, run_cli):
    # A variant's options are the manifest's; --set is the one way to change
    # them, so that a sweep says what it changed.
    result = run_cli("--manifest", "--out-dir", str(tmp_path), "--num-stages", "3")
    assert result.returncode == 2
    assert "--num-stages: a variant's options come from the manifest" in result.stderr


# -- launch specs -------------------------------------------------------------

def test_launch_spec_is_recorded_on_the_kernel():
    @tile.jit(launch=tile.Launch(grid=("cdiv(n, BLOCK)",), keys=("BLOCK",), length="n"))
    def scaled(X, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(X + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)

    text = compile_text(scaled, "*fp32,i32", BLOCK=64)
    assert ('tile.launch = {"grid" = ["cdiv(n, BLOCK)"], "keys" = ["BLOCK"], '
            '"length" = "n"}') in text


def test_launch_grid_function_takes_the_constexprs():
    """A grid that depends on a constexpr: a function of them (Triton's
    META), evaluated for each specialization."""
    def grid(meta):
        if meta["PERSISTENT"]:
            return "min(cdiv(n, BLOCK), PERSISTENT * NUM_SMS)"
        return ("cdiv(n, BLOCK)",)

    @tile.jit(launch=tile.Launch(grid=grid, keys=("BLOCK",)))
    def scaled(X, n, BLOCK: tl.constexpr, PERSISTENT: tl.constexpr = 0):
        offs = tl.arange(0, BLOCK)
        tl.store(X + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)

    assert '"grid" = ["cdiv(n, BLOCK)"]' in compile_text(scaled, "*fp32,i32", BLOCK=64)
    assert ('"grid" = ["min(cdiv(n, BLOCK), PERSISTENT * NUM_SMS)"]'
            in compile_text(scaled, "*fp32,i32", BLOCK=64, PERSISTENT=2))

    @tile.jit(launch=tile.Launch(grid=lambda meta: 3))
    def bad(X, n, BLOCK: tl.constexpr):
        pass

    with pytest.raises(CompilationError, match="grid is one to three expressions"):
        compile_text(bad, "*fp32,i32", BLOCK=64)

    @tile.jit(launch=tile.Launch(grid=lambda meta: f"cdiv(n, {meta['BLOCKS']})"))
    def raising(X, n, BLOCK: tl.constexpr):
        pass

    with pytest.raises(CompilationError,
                       match="the grid function <lambda> raised KeyError: 'BLOCKS'"):
        compile_text(raising, "*fp32,i32", BLOCK=64)


@pytest.mark.parametrize("launch, message", [
    (lambda: tile.Launch(grid=()), "grid is one to three expressions"),
    (lambda: tile.Launch(grid=("1", "1", "1", "1")), "grid is one to three expressions"),
    (lambda: tile.Launch(grid=(3,)), "grid is one to three expressions"),
    (lambda: tile.Launch(grid="n", keys="BLOCK"), "keys is a sequence of constexpr names"),
    (lambda: tile.Launch(grid="n", length=3), "length names an integer parameter"),
])
def test_launch_spec_errors(launch, message):
    with pytest.raises(TypeError, match=message):
        launch()


def test_launch_spec_names_the_kernels_parameters():
    def kernel(X, n, BLOCK: tl.constexpr):
        pass
    with pytest.raises(TypeError, match="key 'n' is no constexpr parameter"):
        tile.jit(launch=tile.Launch(grid="n", keys=("n",)))(kernel)
    with pytest.raises(TypeError, match="length 'BLOCK' is no run-time parameter"):
        tile.jit(launch=tile.Launch(grid="n", length="BLOCK"))(kernel)
    with pytest.raises(TypeError, match="takes a tile.Launch, not dict"):
        tile.jit(launch={"grid": "n"})(kernel)


# -- the compiled-kernel cache -------------------------------------------------

def test_an_unchanged_kernel_comes_from_the_cache(tmp_path, run_cli, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TILE_CACHE_DIR", str(cache))
    args = ("examples/vector_add.py:vector_add", "--signature",
            "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK=256", "--emit", "ptx")
    first = run_cli(*args, "-o", str(tmp_path / "a" / "vector_add.mlir"))
    assert first.returncode == 0, first.stderr
    cached, = cache.glob("*/*/vector_add.json")
    # Mark the cached metadata: a second build that copies it shows the mark.
    cached.write_text(cached.read_text().replace('"name"', '"cached": true, "name"', 1))
    second = run_cli(*args, "-o", str(tmp_path / "b" / "vector_add.mlir"))
    assert second.returncode == 0, second.stderr
    assert json.loads((tmp_path / "b" / "vector_add.json").read_text())["cached"] is True


def test_cache_hits_copy_the_same_files(tmp_path, tile_compile, monkeypatch):
    from tile.compile import load_module
    from tile.compiler import driver
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILE_COMPILE", tile_compile)
    vector_add = load_module(os.path.join(REPO, "examples", "vector_add.py")).vector_add
    module = tmp_path / "k.mlir"
    module.write_text(compile_text(vector_add, "*fp32:16,*fp32:16,*fp32:16,i32:16",
                                   BLOCK=256))
    driver.run_tile_compile([str(module)], emit="ptx")
    made = {p.name: p.read_bytes() for p in tmp_path.glob("k.*")}
    assert set(made) == {"k.mlir", "k.json", "k.ptx"}
    (tmp_path / "k.json").unlink()
    (tmp_path / "k.ptx").write_text("stale")
    driver.run_tile_compile([str(module)], emit="ptx")
    assert {p.name: p.read_bytes() for p in tmp_path.glob("k.*")} == made
    # Another option is another key.
    driver.run_tile_compile([str(module)], emit="ptx", option_overrides="target=sm_80")
    assert ".target sm_80" in (tmp_path / "k.ptx").read_text()
    assert len(list((tmp_path / "cache").glob("*/*"))) == 2
    # Metadata alone removes the PTX of the entry before, as tile-compile does.
    driver.run_tile_compile([str(module)], emit="metadata")
    assert not (tmp_path / "k.ptx").exists()
    # Another tile-compile is another key: it runs (and here, fails).
    broken = tmp_path / "tile-compile"
    broken.write_text("#!/bin/sh\necho broken tool >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("TILE_COMPILE", str(broken))
    with pytest.raises(BackendError, match="broken tool"):
        driver.run_tile_compile([str(module)], emit="ptx")
    # With the cache off, every build runs the tool.
    monkeypatch.setenv("TILE_CACHE_DIR", "off")
    monkeypatch.setenv("TILE_COMPILE", tile_compile)
    driver.run_tile_compile([str(module)], emit="ptx")
    assert len(list((tmp_path / "cache").glob("*/*"))) == 3


@tile.jit
def _scaled(x, FACTOR: tl.constexpr):
    return x * FACTOR


@tile.jit
def constexpr_param_given_a_runtime_value(X, n):
    tl.store(X, _scaled(tl.load(X), n) + _scaled(tl.load(X), 2))


def test_a_helpers_constexpr_parameter_takes_a_runtime_value():
    # As Triton: the argument decides; n stays a run-time value (an
    # arith.muli of the loaded value by %n), 2 a constant.
    text = compile_kernel(constexpr_param_given_a_runtime_value, "*i32,i32")
    assert re.search(r"arith\.muli %\w+, %n : i32", text), text
    assert re.search(r"arith\.constant 2 : i32", text), text


@tile.jit
def hinted_copy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(tl.where(offs < n, offs, 0), BLOCK), BLOCK)
    tl.store(Y + offs, tl.load(X + offs))


def test_axis_hints_become_axis_hint_ops():
    text = compile_kernel(hinted_copy, "*fp32:16,*fp32:16,i32", {"BLOCK": 128})
    assert re.search(r"tile\.axis_hint %\d+ \{divisibility = array<i64: 128>\}", text)
    assert re.search(r"tile\.axis_hint %\d+ \{contiguity = array<i64: 128>\}", text)


@tile.jit
def badly_hinted(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)[:, None] + tl.arange(0, BLOCK)[None, :]
    tl.store(X + offs, tl.max_contiguous(offs, (BLOCK,)))


def test_axis_hint_takes_one_value_a_dimension():
    with pytest.raises(CompilationError, match="one value a dimension of its input"):
        compile_kernel(badly_hinted, "*i32", {"BLOCK": 16})


@tile.jit
def _staged_rows(X, n, STAGES: tl.constexpr):
    offs = tl.arange(0, 32)
    for row in tl.range(0, n, num_stages=STAGES):
        tl.store(X + row * 32 + offs, tl.load(X + row * 32 + offs) * 2.0)


def test_range_num_stages_is_the_loops_own():
    # tl.range's num_stages goes on its scf.for (tilegpu-pipeline takes it
    # over the compile option there, and copies ahead the loop's loads that
    # feed no product, as Triton does); without it the loop has none.
    text = compile_text(_staged_rows, "*fp32,i32", STAGES=3)
    assert re.search(r"\} \{tile.num_stages = 3 : i32\}", text), text
    with pytest.raises(CompilationError, match="num_stages must be a constexpr integer of at "
                                               "least 1, got the constant 0"):
        compile_text(_staged_rows, "*fp32,i32", STAGES=0)
    plain = compile_text(sample_kernels.carried, "*fp32,*fp32,i32")
    assert "tile.num_stages" not in plain
