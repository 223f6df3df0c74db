#!/usr/bin/env bash
# Tile's entry point for newcomers, developers and CI.
#
#   ./dev.sh run    install what is missing, build, and run the main job
#   ./dev.sh test   install what is missing, build, and run every test
#   ./dev.sh build  install what is missing and build
#   ./dev.sh docs   refresh docs/reference/ from the TableGen definitions
#
# Each step does only what is needed: packages already installed are not
# installed again, and the build is incremental (ccache when present).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${TILE_BUILD_DIR:-$ROOT/build}
LLVM=/usr/lib/llvm-22

# Debian 12 packages the build and the tests need.
PACKAGES=(cmake ninja-build g++ ccache python3 python3-pytest python3-numpy
          llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libgtest-dev)

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

run_tests() {
  build
  local results="$BUILD/test-results" status=0
  rm -rf "$results" && mkdir -p "$results"
  say "lit tests"
  "$LLVM/bin/lit" -sv --xunit-xml-output="$results/lit.xml" "$BUILD/test" ||
    status=1
  say "unit tests"
  "$BUILD/bin/TileUnitTests" --gtest_brief=1 \
    --gtest_output="xml:$results/unit.xml" || status=1
  if [ -d "$ROOT/test/python" ]; then
    say "python tests"
    # Debian's pytest belongs to the system interpreter.
    TILE_BUILD_DIR="$BUILD" /usr/bin/python3 -m pytest -q "$ROOT/test/python" \
      --junitxml="$results/pytest.xml" || status=1
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

case "${1:-}" in
  run) run_main_job ;;
  test) run_tests ;;
  build) build ;;
  docs) refresh_docs ;;
  *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
