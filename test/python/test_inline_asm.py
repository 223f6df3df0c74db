"""tl.inline_asm_elementwise: the op the frontend writes, its errors, the
PTX tile-compile makes of it, and the interpreter's refusal. (It runs on
the GPU in test/gpu/check_jit_launch.py.)"""

import os
import subprocess
import sys

import pytest

import tile
import tile.language as tl
from conftest import REPO
from tile.compile import load_module
from tile.compiler import compile_kernel
from tile.compiler.errors import CompilationError

PYTHON_DIR = os.path.join(REPO, "python")

# The example's kernel: a rotate, bytes to (int32, float32) four a run, an
# asm with side effects given a number.
asm_kernel = load_module(os.path.join(REPO, "examples", "inline_asm.py")).asm_kernel


SIGNATURE = "*i32:16,*u8:16,*i32:16,*i32:16,*fp32:16,i32"


def test_the_frontend_writes_one_op_a_call():
    text = compile_kernel(asm_kernel, SIGNATURE, {"BLOCK": 256})
    ops = [line for line in text.splitlines() if "tile.inline_asm_elementwise" in line]
    assert len(ops) == 3
    assert '"shf.l.wrap.b32 $0, $1, $1, 8;" {constraints = "=r,r", pure = true, ' \
        'packed_element = 1 : i32}' in ops[0]
    assert ops[0].rstrip().split(" loc(")[0].endswith(
        ": tensor<256xi32> -> tensor<256xi32>")
    assert ":2 = tile.inline_asm_elementwise" in ops[1]
    assert "packed_element = 4 : i32" in ops[1]
    assert "tensor<256xi8> -> tensor<256xi32>, tensor<256xf32>" in ops[1]
    assert "pure = false" in ops[2]
    assert "tensor<256xi32>, tensor<256xi32> -> tensor<256xi32>" in ops[2]


def test_tile_compile_puts_the_assembly_in_the_ptx(tmp_path, tile_compile):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, TILE_COMPILE=tile_compile,
               TILE_CACHE_DIR="off")
    result = subprocess.run(
        [sys.executable, "-m", "tile.compile", "examples/inline_asm.py:asm_kernel", "--signature",
         SIGNATURE, "--constexpr", "BLOCK=256", "--num-warps", "4", "--emit", "ptx",
         "-o", str(tmp_path / "asm.mlir")], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "asm.ptx").read_text()
    # 256 elements on 128 threads: two a thread, one rotate each, one run of
    # the byte conversion (its last two of four elements repeats).
    assert ptx.count("shf.l.wrap.b32") == 2
    assert ptx.count("mov.b32 {t0, t1, t2, t3}") == 1
    assert ptx.count("add.s32") >= 2


@tile.jit
def asm_errors(X, CASE: tl.constexpr):
    x = tl.load(X + tl.arange(0, 16))
    if CASE == 0:
        tl.inline_asm_elementwise("", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=3)
    elif CASE == 1:
        tl.inline_asm_elementwise("", "=r,r", x, dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == 2:
        tl.inline_asm_elementwise("", "=r,r", [x > 0], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == 3:
        tl.inline_asm_elementwise("", "=r,r", [1], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == 4:
        tl.inline_asm_elementwise("", "=r,r", [x], dtype=(), is_pure=True, pack=1)
    elif CASE == 5:
        tl.inline_asm_elementwise("", "=r,r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    else:
        tl.inline_asm_elementwise(x, "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)


@pytest.mark.parametrize("case, message", [
    (0, r"pack must be 1, 2, 4, 8, 16 or 32, got the constant 3"),
    (1, r"args must be a tuple or list of tensors and numbers"),
    (2, r"args\[0\] must be of 8, 16, 32 or 64 bits \(convert booleans to tl.int8\)"),
    (3, r"args hold no tensor"),
    (4, r"dtype names no result"),
    (6, r"asm must be a constexpr string"),
])
def test_mistakes_are_located_errors(case, message):
    with pytest.raises(CompilationError, match=message) as error:
        compile_kernel(asm_errors, "*i32:16", {"CASE": case})
    assert "test_inline_asm.py:" in str(error.value)


def _compile_cli(tmp_path, tile_compile, case):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, TILE_COMPILE=tile_compile,
               TILE_CACHE_DIR="off")
    return subprocess.run(
        [sys.executable, "-m", "tile.compile", f"{__file__}:asm_errors", "--signature",
         "*i32:16", "--constexpr", f"CASE={case}", "--emit", "ptx",
         "-o", str(tmp_path / "errors.mlir")], cwd=REPO, env=env, capture_output=True,
        text=True)


def test_constraints_that_name_other_registers_are_refused_where_written(tmp_path,
                                                                         tile_compile):
    """The registers the constraints must name follow from the types and
    pack: the op's verifier counts them, at the call's line."""
    result = _compile_cli(tmp_path, tile_compile, 5)
    assert result.returncode != 0
    assert 'constraints "=r,r,r" name 1 output and 2 input registers, but 1 element(s) a ' \
        'run of these types take 1 and 1' in result.stderr
    assert "test_inline_asm.py:" in result.stderr


torch = pytest.importorskip("torch")


@pytest.mark.usefixtures("launcher_tools")
def test_the_interpreter_refuses_it_by_name():
    x = torch.arange(300, dtype=torch.int32)
    b = torch.zeros(300, dtype=torch.uint8)
    outputs = (torch.empty_like(x), torch.empty_like(x), torch.empty(300))
    with pytest.raises(RuntimeError, match=r"examples/inline_asm.py:\d+:\d+: "
                                           r"tl.inline_asm_elementwise runs PTX, which the "
                                           r"interpreter cannot: run the kernel on the GPU"):
        asm_kernel[(2,)](x, b, *outputs, 300, BLOCK=256)


def test_tiles_own_kernels_use_none():
    """Tile's speed comes from its compiler: its shipped kernels hold no
    hand-written assembly."""
    folder = os.path.join(PYTHON_DIR, "tile", "kernels")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name)) as f:
                assert "inline_asm" not in f.read(), name
