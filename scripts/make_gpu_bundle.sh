#!/usr/bin/env bash
# Assembles a self-contained GPU bundle: tile-run and the runtime library,
# the compiled kernels, users' kernels for the generic mode, the GPU tests
# (test/gpu, with the pytest tests of tile.attention in test/python and the
# summary script in scripts/), the examples with the kernels test/gpu's jit
# part launches from them (jit-kernels/), tile.attention (python/tile), the
# benchmark harness (benchmarks/) and the GPU tools of scripts/gpu (at the
# root). Copy the folder to any machine with the NVIDIA driver and run
# test/gpu/run.sh there: it needs no MLIR and no CUDA toolkit; python3 with
# numpy and PyTorch runs the checks of outputs, tile.attention's tests and
# the summary.
#
#   scripts/make_gpu_bundle.sh [OUT]     (default OUT: build/gpu-bundle)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${TILE_BUILD_DIR:-$ROOT/build}
OUT=${1:-$BUILD/gpu-bundle}

ninja -C "$BUILD" tile-run tile_runtime tile-compile tile-kernels
rm -rf "$OUT" && mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/kernels" "$OUT/user-kernels"
cp "$BUILD/bin/tile-run" "$OUT/bin/"
# The runtime's C interface, for tile.attention (python/tile/runtime.py
# finds it in <bundle>/lib).
cp "$BUILD/lib/libtile_runtime.so" "$OUT/lib/"
cp "$BUILD"/kernels/*.json "$BUILD"/kernels/*.ptx "$BUILD"/kernels/*.cubin \
  "$OUT/kernels/" 2>/dev/null || true

# Users' kernels, compiled like any other (tile IR, metadata, PTX, cubin):
# a vector add and a kernel of scalar parameters of every width for the
# generic mode, and kernels that add with tl.atomic_add, for
# test/gpu/atomic_add.sh.
compile() {
  TILE_COMPILE="$BUILD/bin/tile-compile" PYTHONPATH="$ROOT/python" \
    python3 -m tile.compile "$@"
}
compile "$ROOT/examples/vector_add.py:vector_add" \
  --signature "*fp32:16,*fp32:16,*fp32:16,i32:16" --constexpr BLOCK=256 --num-warps 4 \
  -o "$OUT/user-kernels/vector_add.mlir"
compile "$ROOT/test/gpu/scalar_params.py:store_scalars" \
  --signature "*fp32:16,fp16,bf16,fp32,fp64,i1,i8,i16,i64" --num-warps 1 \
  -o "$OUT/user-kernels/store_scalars.mlir"
compile "$ROOT/examples/atomic_add.py:tile_sum" \
  --signature "*fp32:16,*fp32:16" --constexpr BLOCK_M=64 --constexpr D=128 --num-warps 8 \
  -o "$OUT/user-kernels/tile_sum.mlir"
compile "$ROOT/examples/atomic_add.py:take_tickets" \
  --signature "*i32:16,*i32:16" --constexpr BLOCK=256 --num-warps 4 \
  -o "$OUT/user-kernels/take_tickets.mlir"
# A GEMM through host-side tensor descriptors, its K loop copied by the TMA
# (three stages), for test/gpu/matmul.sh.
compile "$ROOT/examples/descriptor_matmul.py:matmul" \
  --signature "tensordesc<fp16[64, 64]>,tensordesc<fp16[64, 64]>,tensordesc<fp16[64, 64]>" \
  --constexpr BM=64 --constexpr BN=64 --constexpr BK=64 --num-stages 3 \
  -o "$OUT/user-kernels/descriptor_matmul.mlir"

# kernel[grid](...) from PyTorch (test/gpu/check_jit_launch.py, the jit part
# of test/gpu/run.sh): the examples it launches, and their kernels compiled
# ahead of time into jit-kernels/, since the GPU machine has no tile-compile.
# Needs PyTorch ($PYTHON, else build/venv's python3, else python3).
mkdir -p "$OUT/examples"
cp "$ROOT"/examples/*.py "$OUT/examples/"
PYTHON=${PYTHON:-$BUILD/venv/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3
if "$PYTHON" -c "import torch" 2> /dev/null; then
  TILE_BUILD_DIR="$BUILD" TILE_COMPILE="$BUILD/bin/tile-compile" TILE_RUN="$BUILD/bin/tile-run" \
    PYTHONPATH="$ROOT/python" "$PYTHON" "$ROOT/test/gpu/check_jit_launch.py" --prepare \
    --kernels "$OUT/jit-kernels" > /dev/null
  # The launcher's folders alone: the driver's cache entries serve no one there.
  find "$OUT/jit-kernels" -mindepth 1 -maxdepth 1 ! -name jit -exec rm -rf {} +
else
  echo "make_gpu_bundle.sh: $PYTHON has no PyTorch: jit-kernels/ is not prepared, and" \
    "the jit part of test/gpu/run.sh will fail"
fi

# The GPU tools (profiling, spills, launch overhead, block-size sweeps) run
# from the bundle's root.
cp "$ROOT"/scripts/gpu/*.sh "$ROOT"/scripts/gpu/*.py "$OUT/"

# The GPU tests where they are in the repository, so that test/gpu/run.sh
# finds the bundle's root two folders up, and the summary beside them.
mkdir -p "$OUT/test/gpu" "$OUT/test/python" "$OUT/scripts"
cp "$ROOT"/test/gpu/*.sh "$ROOT"/test/gpu/*.py "$OUT/test/gpu/"
cp "$ROOT/scripts/summarize_tests.py" "$OUT/scripts/"

# tile.attention for PyTorch users (python/tile finds ../kernels), its tests
# (test/gpu/api.sh runs the GPU-marked ones) and the benchmark harness.
mkdir -p "$OUT/python"
cp -r "$ROOT/python/tile" "$OUT/python/"
cp -r "$ROOT/benchmarks" "$OUT/"
cp "$ROOT"/test/python/test_attention_*.py "$ROOT"/test/python/*_reference.py \
  "$ROOT"/test/python/runtime_stand_in.py "$OUT/test/python/"
find "$OUT/python" "$OUT/benchmarks" "$OUT/test" -name __pycache__ -prune -exec rm -rf {} +
cat > "$OUT/test/python/conftest.py" <<'PY'
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The bundle's root, as the checkout's is for the tests there: it holds
# python/ and benchmarks/.
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(REPO, "python"), HERE]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and the compiled kernels")
PY
echo "GPU bundle in $OUT ($(du -sh "$OUT" | cut -f1)): run test/gpu/run.sh there" \
  "(the tests), python3 benchmarks/attention_bench.py and matmul_bench.py (the speed)"
