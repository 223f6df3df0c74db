#!/usr/bin/env bash
# Every GPU test, from a GPU bundle (scripts/make_gpu_bundle.sh), then one
# line in the form of the CPU suite's:
#
#   tile: N passed, N failed, N skipped
#
# summed by scripts/summarize_tests.py over the JUnit XML each part writes
# to $OUT/junit/ (OUT: default <bundle>/results; logs in $OUT/PART/).
# Exits non-zero when a test failed or none ran.
#
#   test/gpu/run.sh [--quick] [PART ...]      (default: every part)
#
#   softmax     softmax 1-4 against the float64 reference, a user kernel
#               through the generic mode, memcheck (softmax.sh)
#   attention   attention forward and backward and the puzzle forward
#               against the float64 reference, memcheck (attention.sh)
#   matmul      the GEMM (matmul_fp16, matmul_bf16) against the float64
#               product at ragged shapes and at 4096^3, memcheck, and a GEMM
#               through host-side tensor descriptors (matmul.sh)
#   atomic_add  tl.atomic_add (atomic_add.sh)
#   tma         TMA descriptors encoded through the runtime: fp16, bf16,
#               fp32 with the 128-byte swizzle, a misaligned address
#               refused (tensor_maps.sh)
#   api         tile.attention: a smoke test, the GPU-marked pytest tests,
#               flash_attn_func against float32 SDPA (api.sh)
#   jit         Triton's tutorials 01-03 (examples/pytorch_launch.py)
#               launched from PyTorch with kernel[grid](...), against
#               float64 references at ragged sizes (check_jit_launch.py;
#               the kernels compiled into the bundle's jit-kernels/)
#   ring        ring, striped and step attention over NCCL
#               (check_ring_attention.py), where two or more GPUs are
#               visible; else one skipped case that says so
#   crosscheck  the GPU half of crosscheck.sh, into $OUT/crosscheck: bring
#               it back and compare with the interpreter there
#   sanitize    compute-sanitizer memcheck and initcheck over every shipped
#               kernel (sanitize.sh; TOOLS="racecheck synccheck" the other
#               two); not among the default parts: it takes long
#               (ONLY=REGEX splits it)
#
# --quick: attention's eight quick checks instead of all, and fewer shapes
# in the flash_attn_func checks. TILE_TARGET=sm_80 runs the attention and
# decoding kernels compiled for sm_80 instead (on a Hopper GPU from their
# PTX, which the driver compiles: the bundle must hold the *_sm80.ptx).
# memcheck needs compute-sanitizer (its cases are skipped without it); tma,
# api, jit and ring need PyTorch with CUDA.
# Speed is measured apart, never here: benchmarks/attention_bench.py and
# benchmarks/matmul_bench.py (docs/benchmarks.md).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export OUT=${OUT:-$ROOT/results}
ALL_PARTS="softmax attention matmul atomic_add tma api jit ring crosscheck"
OPT_PARTS="sanitize"   # run only when named
quick="" parts=()
for arg in "$@"; do
  case " $ALL_PARTS $OPT_PARTS --quick -h --help " in
    *" $arg "*) ;;
    *) echo "run.sh: unknown part or option '$arg' (parts: $ALL_PARTS $OPT_PARTS)"; exit 2 ;;
  esac
  case $arg in
    --quick) quick=--quick ;;
    -h | --help) sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) parts+=("$arg") ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || read -ra parts <<< "$ALL_PARTS"
if [ ! -x "$ROOT/bin/tile-run" ]; then
  echo "run.sh: no $ROOT/bin/tile-run: run it from a GPU bundle (scripts/make_gpu_bundle.sh)"
  exit 2
fi
command -v python3 > /dev/null ||
  { echo "run.sh: python3 is needed (the checks of outputs, the summary)"; exit 2; }
mkdir -p "$OUT"
rm -rf "$OUT/junit"   # reports of an earlier run must not be counted

# jit, ring and crosscheck record their cases here, each in a subshell of its
# own.
jit() (
  # shellcheck source=lib.sh
  . "$HERE/lib.sh"
  junit_begin jit
  if ! python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    record "kernel[grid](...) from PyTorch" skip "PyTorch with CUDA is needed"
  else
    python3 "$GPU_TESTS/check_jit_launch.py" --kernels "$ROOT/jit-kernels" \
      > "$LOGS/jit_launch.log" 2>&1
    status=$?
    # One case per PASS, FAIL or SKIP line; a run that failed without one
    # fails whole.
    while IFS= read -r line; do
      case $line in
        "PASS "*) record "${line#PASS }" pass ;;
        "SKIP "*) record "${line#SKIP }" skip "$line" ;;
        "FAIL "*) echo "$line"; record "${line#FAIL }" fail "$line" ;;
      esac
    done < "$LOGS/jit_launch.log"
    tail -1 "$LOGS/jit_launch.log"
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
      record "kernel[grid](...) from PyTorch" fail "$(tail -8 "$LOGS/jit_launch.log")"
    fi
  fi
  [ "$failed" -eq 0 ]
)

ring() (
  # shellcheck source=lib.sh
  . "$HERE/lib.sh"
  junit_begin ring
  gpus=$(python3 -c "import torch; print(torch.cuda.device_count())" 2> "$LOGS/gpus.log")
  if [ -z "$gpus" ]; then
    echo "ring attention: skipped, PyTorch could not count the GPUs: $(tail -1 "$LOGS/gpus.log")"
    record "ring attention" skip "PyTorch could not count the GPUs"
  elif [ "$gpus" -lt 2 ]; then
    echo "ring attention: skipped, it needs 2 or more GPUs and $gpus is visible"
    record "ring attention" skip "needs 2 or more GPUs; $gpus visible"
  else
    PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} python3 \
      "$GPU_TESTS/check_ring_attention.py" --gpus "$gpus" \
      --junit "$OUT/junit/ring_attention.xml" 2>&1 | tee "$LOGS/ring_attention.log" ||
      elsewhere=1
    [ -s "$OUT/junit/ring_attention.xml" ] || record "ring attention on $gpus GPUs" fail \
      "did not finish: $(tail -20 "$LOGS/ring_attention.log")"
  fi
  [ "$failed" -eq 0 ] && [ "$elsewhere" -eq 0 ]
)

crosscheck() (
  # shellcheck source=lib.sh
  . "$HERE/lib.sh"
  junit_begin crosscheck
  if "$GPU_TESTS/crosscheck.sh" gpu "$OUT/crosscheck" > "$LOGS/crosscheck.log" 2>&1; then
    echo "crosscheck: GPU results in $OUT/crosscheck; compare them in the repository with" \
      "test/gpu/crosscheck.sh compare DIR"
    record "crosscheck, the GPU half" pass
  else
    tail -5 "$LOGS/crosscheck.log"
    record "crosscheck, the GPU half" fail "$(tail -5 "$LOGS/crosscheck.log")"
  fi
  [ "$failed" -eq 0 ]
)

nvidia-smi -L 2> /dev/null || true
for part in "${parts[@]}"; do
  echo
  echo "==== $part"
  case $part in
    softmax) "$HERE/softmax.sh" ;;
    attention) "$HERE/attention.sh" $quick ;;
    matmul) "$HERE/matmul.sh" ;;
    atomic_add) "$HERE/atomic_add.sh" ;;
    tma) "$HERE/tensor_maps.sh" ;;
    api) "$HERE/api.sh" $quick ;;
    jit) jit ;;
    ring) ring ;;
    crosscheck) crosscheck ;;
    sanitize) "$HERE/sanitize.sh" ;;
  esac
  status=$?
  # A part killed before it could write its report still counts, as failed.
  if [ ! -s "$OUT/junit/$part.xml" ]; then
    mkdir -p "$OUT/junit"
    echo "<testsuite name=\"$part\"><testcase classname=\"$part\" name=\"$part\">" \
      "<failure message=\"failed\">$part exited with status $status and wrote no" \
      "report</failure></testcase></testsuite>" > "$OUT/junit/$part.xml"
  fi
done
echo
echo "==== summary (reports in $OUT/junit)"
python3 "$ROOT/scripts/summarize_tests.py" "$OUT"/junit/*.xml
