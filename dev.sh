#!/usr/bin/env bash
# Tile's entry point for newcomers, developers and CI.
#
#   ./dev.sh run    install what is missing, build, and run the main job
#   ./dev.sh test   install what is missing, build, and run every test
#   ./dev.sh build  install what is missing and build
#   ./dev.sh lint   lint the Python (ruff) and check the C++ format
#                   (clang-format); ./dev.sh test runs both too
#   ./dev.sh docs   refresh docs/reference/ from the TableGen definitions
#   ./dev.sh sanitize  build with AddressSanitizer and UndefinedBehavior-
#                   Sanitizer (in build-sanitize/) and run the unit and
#                   lit suites with it (about 30 minutes on 2 cores)
#
# Each step does only what is needed: packages already installed are not
# installed again, and the build is incremental (ccache when present).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${TILE_BUILD_DIR:-$ROOT/build}
LLVM=/usr/lib/llvm-22

# Debian 12 packages the build and the tests need.  python3-wheel lets
# Debian's setuptools (66) build the editable install of tile offline.
PACKAGES=(cmake ninja-build g++ ccache python3 python3-pytest python3-numpy
          python3-venv python3-wheel llvm-22-dev llvm-22-tools libmlir-22-dev
          mlir-22-tools libgtest-dev clang-format-22)

# Test-only Python packages live in a virtual environment in the build
# folder, which also sees Debian's pytest and numpy: nothing is installed
# system-wide with pip.  PyTorch is there for tile.attention's tests, which
# need no GPU.  pip's default index serves PyTorch's CUDA build (about 5 GB
# installed, the same API); TILE_TORCH_INDEX names another wheel index, such
# as PyTorch's CPU-only one, where it can be reached.  ruff, the Python
# linter, is pinned: a new release may bring new findings.  The venv also
# holds tile itself, installed editable from this checkout.
TEST_VENV=$BUILD/venv
TORCH_REQUIREMENT=${TILE_TORCH_REQUIREMENT:-torch==2.15.0}
RUFF_VERSION=0.17.6

say() { echo "dev.sh: $*"; }

install_missing_packages() {
  local missing=() package
  for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null ||
      { say "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo=sudo
  fi
  say "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
}

build() {
  install_missing_packages
  if [ ! -f "$BUILD/build.ninja" ]; then
    say "configuring $BUILD"
    cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit"
  fi
  ninja -C "$BUILD"
}

run_main_job() {
  build
  local tile_opt="$BUILD/bin/tile-opt" kernel count=0
  say "verifying and canonicalizing the kernels through tile-opt"
  for kernel in "$ROOT"/examples/*.mlir "$BUILD"/kernels/*.mlir; do
    [ -f "$kernel" ] || continue
    "$tile_opt" -canonicalize -cse "$kernel" -o /dev/null
    printf '  %-48s ok (%d tile ops)\n' "$(basename "$kernel")" \
      "$("$tile_opt" -canonicalize -cse "$kernel" | grep -c 'tile\.')"
    count=$((count + 1))
  done
  say "$count kernels verified"
  say "checking the attention kernels with tile-run (on the GPU when one is" \
    "usable, else the interpreter)"
  local run="$BUILD/bin/tile-run"
  "$run" attention --mode fwd --batch 2 --heads 4 --seq 257 --head-dim 64 \
    --causal --check --bench
  "$run" attention --mode fwd --batch 1 --heads 2 --seq 100 --head-dim 128 \
    --dtype bf16 --check
  "$run" attention --mode bwd --batch 2 --heads 4 --seq 257 --head-dim 128 \
    --check
  "$run" softmax --variant 3 --rows 17 --cols 1000 --check
}

make_test_venv() {
  [ -x "$TEST_VENV/bin/python3" ] && return 0
  say "creating $TEST_VENV for test-only Python packages"
  /usr/bin/python3 -m venv --system-site-packages "$TEST_VENV"
}

pip_install() {
  "$TEST_VENV/bin/python3" -m pip install -q --disable-pip-version-check "$@"
}

install_ruff() {
  make_test_venv
  "$TEST_VENV/bin/ruff" --version 2>/dev/null | grep -qx "ruff $RUFF_VERSION" &&
    return 0
  say "installing ruff==$RUFF_VERSION into $TEST_VENV for the lint"
  pip_install "ruff==$RUFF_VERSION" && return 0
  say "error: ruff could not be installed into $TEST_VENV"
  exit 1
}

# tile, editable from this checkout: `python3 -m tile.compile`, the
# benchmarks and the scripts import it from anywhere in the venv.  No
# download: Debian's setuptools builds it (--no-build-isolation).  Installed
# again only when the venv's tile is another checkout's or another version.
install_tile() {
  make_test_venv
  "$TEST_VENV/bin/python3" -I -c '
import importlib.metadata, sys, tile
sys.exit(tile.__file__ != sys.argv[1] or
         importlib.metadata.version("tile-mlir") != tile.__version__)' \
    "$ROOT/python/tile/__init__.py" 2>/dev/null && return 0
  say "installing tile (editable, from $ROOT) into $TEST_VENV"
  pip_install --no-deps --no-build-isolation -e "$ROOT"
}

install_torch() {
  "$TEST_VENV/bin/python3" -c "import torch" 2>/dev/null && return 0
  say "installing $TORCH_REQUIREMENT into $TEST_VENV for the tests"
  # --no-cache-dir: pip's cache would hold the wheels a second time (about
  # 3 GB for the CUDA build); a CI run out of disk failed here.
  pip_install --no-cache-dir ${TILE_TORCH_INDEX:+--index-url "$TILE_TORCH_INDEX"} \
    "$TORCH_REQUIREMENT" && return 0
  # A missing PyTorch must not turn tile.attention's tests into silent skips.
  if [ "${TILE_SKIP_TORCH_TESTS:-0}" = 1 ]; then
    say "warning: PyTorch could not be installed; TILE_SKIP_TORCH_TESTS=1:" \
      "tile.attention's API tests will be skipped"
    return 0
  fi
  say "error: PyTorch could not be installed into $TEST_VENV (set" \
    "TILE_TORCH_INDEX to another index, or TILE_SKIP_TORCH_TESTS=1 to skip" \
    "tile.attention's tests)"
  exit 1
}

setup_test_python() {
  make_test_venv
  install_tile
  install_ruff
  install_torch
}

# ruff check over the tree (pyproject.toml says what and how); with an
# argument, also writes the findings there as JUnit XML for the summary.
lint() {
  install_ruff
  say "python lint (ruff $RUFF_VERSION)"
  local ruff=("$TEST_VENV/bin/ruff" check --cache-dir "$BUILD/ruff-cache") status=0
  (cd "$ROOT" && "${ruff[@]}" --quiet) || status=1
  [ $status -eq 1 ] || echo "ruff check: clean"
  if [ $# -gt 0 ]; then
    (cd "$ROOT" && "${ruff[@]}" --exit-zero --output-format junit --output-file "$1")
  fi
  return $status
}

# clang-format over the C++ (.clang-format: LLVM style); with an argument,
# also writes one JUnit test case per file there, for the summary.
format_check() {
  say "C++ format (clang-format-22)"
  local files=() bad=() file status=0
  mapfile -t files < <(cd "$ROOT" && git ls-files '*.cpp' '*.h')
  for file in "${files[@]}"; do
    clang-format-22 --dry-run --Werror "$ROOT/$file" > /dev/null 2>&1 ||
      bad+=("$file")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    status=1
    printf '  not formatted: %s\n' "${bad[@]}"
    echo "  fix with: clang-format-22 -i FILE"
  else
    echo "clang-format: clean (${#files[@]} files)"
  fi
  if [ $# -gt 0 ]; then
    {
      echo '<testsuite name="clang-format">'
      for file in "${files[@]}"; do
        echo "<testcase classname=\"clang-format\" name=\"$file\">"
        [[ " ${bad[*]} " == *" $file "* ]] &&
          echo '<failure message="not clang-formatted"/>'
        echo '</testcase>'
      done
      echo '</testsuite>'
    } > "$1"
  fi
  return $status
}

run_tests() {
  build
  setup_test_python
  local results="$BUILD/test-results" status=0
  rm -rf "$results" && mkdir -p "$results"
  lint "$results/lint.xml" || status=1
  format_check "$results/format.xml" || status=1
  say "lit tests"
  "$LLVM/bin/lit" -sv --xunit-xml-output="$results/lit.xml" "$BUILD/test" ||
    status=1
  say "unit tests"
  "$BUILD/bin/TileUnitTests" --gtest_brief=1 \
    --gtest_output="xml:$results/unit.xml" || status=1
  if [ -d "$ROOT/test/python" ]; then
    say "python tests"
    # The test environment's interpreter: Debian's pytest and numpy, and
    # PyTorch for tile.attention.  Tests marked gpu skip without CUDA.
    TILE_BUILD_DIR="$BUILD" "$TEST_VENV/bin/python3" -m pytest -q \
      "$ROOT/test/python" --junitxml="$results/pytest.xml" || status=1
  fi
  /usr/bin/python3 "$ROOT/scripts/summarize_tests.py" "$results"/*.xml ||
    status=1
  return $status
}

refresh_docs() {
  build
  cp "$BUILD/include/tile/Dialect/Tile/IR/TileDialect.md" \
    "$BUILD/include/tile/Dialect/TileGPU/IR/TileGPUDialect.md" \
    "$ROOT/docs/reference/"
  say "docs/reference/ refreshed"
}

# The compiler, runtime and interpreter built with ASan and UBSan (LLVM's
# LLVM_USE_SANITIZER, which HandleLLVMOptions applies to every target; MLIR
# and LLVM themselves stay uninstrumented), then the unit and lit suites:
# any report fails the run.
sanitize() {
  install_missing_packages
  local dir=${TILE_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}
  if [ ! -f "$dir/build.ninja" ]; then
    say "configuring $dir (ASan + UBSan)"
    cmake -G Ninja -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
      -DLLVM_USE_SANITIZER="Address;Undefined" \
      -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit"
  fi
  # allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs when
  # compiled with ASan, and the uninstrumented libMLIR does not unpoison
  # what it allocates from a slab our code started: false reports. The
  # build compiles the kernels with the instrumented tile-compile too.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ninja -C "$dir"
  say "unit tests under ASan + UBSan"
  "$dir/bin/TileUnitTests"
  say "lit tests under ASan + UBSan"
  "$LLVM/bin/lit" -sv "$dir/test"
}

case "${1:-}" in
  run) run_main_job ;;
  test) run_tests ;;
  build) build ;;
  lint)
    install_missing_packages
    status=0
    lint || status=1
    format_check || status=1
    exit $status ;;
  docs) refresh_docs ;;
  sanitize) sanitize ;;
  *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
