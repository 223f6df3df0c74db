#!/usr/bin/env bash
# The GEMM kernels of a GPU bundle (matmul_fp16, matmul_bf16) on the GPU,
# through tile-run's generic mode: fresh random inputs (uniform in [-1, 1),
# a seed a check) at shapes that are not multiples of the blocks, rows
# padded to the 16 elements the kernels' signature promises (the padding of
# C must stay NaN), and at 4096^3; each output against the float64 product
# of the same inputs (check_matmul.py: a bound that grows with K). Then
# compute-sanitizer memcheck at small ragged shapes, on buffers no larger
# than the rows need. One case per check in $OUT/junit/matmul.xml; exits 1
# if one failed. Part of run.sh. Needs numpy.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 2
junit_begin matmul
checks=0   # each check's number: its seed

padded() { echo $(( ($1 + 15) / 16 * 16 )); }

# The tile-run arguments of matmul_T on an MxNxK problem whose rows are
# padded to multiples of 16 elements.
arguments() { # t m n k
  local t=$1 m=$2 n=$3 k=$4 sa sb
  sa=$(padded "$k") sb=$(padded "$n")
  echo "matmul_$t A=rand:${m}x$sa B=rand:${k}x$sb C=full:nan:${m}x$sb M=$m N=$n K=$k" \
    "stride_am=$sa stride_bk=$sb stride_cm=$sb"
}

echo "== matmul against the float64 product (--backend $BACKEND)"
SHAPES="1x1x1 7x5x3 100x72x40 129x257x65 128x256x64 1000x1008x496 1000x1001x999 \
3001x2999x1537 4096x4096x4096"
for t in fp16 bf16; do
  for shape in $SHAPES; do
    IFS=x read -r m n k <<< "$shape"
    checks=$((checks + 1))
    log=$LOGS/$t-$shape.log
    # shellcheck disable=SC2046  # the arguments are words
    if $RUN run $(arguments $t "$m" "$n" "$k") --backend "$BACKEND" --seed $checks \
        --out A="$LOGS/a.npy" --out B="$LOGS/b.npy" --out C="$LOGS/c.npy" > "$log" 2>&1 &&
       python3 "$GPU_TESTS/check_matmul.py" "$LOGS/a.npy" "$LOGS/b.npy" "$LOGS/c.npy" \
         --m "$m" --n "$n" --k "$k" --dtype $t >> "$log" 2>&1; then
      tail -1 "$log"
      record "matmul $t $shape" pass
    else
      echo "FAIL matmul $t $shape"; tail -5 "$log"
      record "matmul $t $shape" fail "$(tail -5 "$log")"
    fi
  done
done
rm -f "$LOGS"/[abc].npy
echo "matmul: $passed of $checks checks passed"

echo "== compute-sanitizer memcheck"
for t in fp16 bf16; do
  for shape in 7x5x3 100x72x40 129x257x65; do
    IFS=x read -r m n k <<< "$shape"
    if ! command -v compute-sanitizer > /dev/null; then
      record "memcheck matmul $t $shape" skip "compute-sanitizer not found"
      continue
    fi
    # shellcheck disable=SC2046
    if compute-sanitizer --tool memcheck --error-exitcode 9 \
        $RUN run $(arguments $t "$m" "$n" "$k") --backend "$BACKEND" \
        > "$LOGS/memcheck.log" 2>&1; then
      echo "memcheck matmul $t $shape: $(grep -m1 'ERROR SUMMARY' "$LOGS/memcheck.log")"
      record "memcheck matmul $t $shape" pass
    else
      echo "FAIL memcheck matmul $t $shape"; tail -20 "$LOGS/memcheck.log"
      record "memcheck matmul $t $shape" fail "$(tail -20 "$LOGS/memcheck.log")"
    fi
  done
done
echo "== compute-sanitizer racecheck, synccheck"
for tool in racecheck synccheck; do
  for t in fp16 bf16; do
    IFS=x read -r m n k <<< "129x257x65"
    if ! command -v compute-sanitizer > /dev/null; then
      record "$tool matmul $t 129x257x65" skip "compute-sanitizer not found"
      continue
    fi
    # shellcheck disable=SC2046
    if compute-sanitizer --tool "$tool" --error-exitcode 9 \
        $RUN run $(arguments $t "$m" "$n" "$k") --backend "$BACKEND" \
        > "$LOGS/$tool.log" 2>&1; then
      echo "$tool matmul $t 129x257x65: $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$LOGS/$tool.log")"
      record "$tool matmul $t 129x257x65" pass
    else
      echo "FAIL $tool matmul $t 129x257x65"; tail -20 "$LOGS/$tool.log"
      record "$tool matmul $t 129x257x65" fail "$(tail -20 "$LOGS/$tool.log")"
    fi
  done
done
command -v compute-sanitizer > /dev/null || echo "compute-sanitizer not found: memcheck skipped"

# The GEMM through host-side tensor descriptors (user-kernels/, TMA copies in
# its K loop), launched from PyTorch with tile.TensorDescriptor arguments.
record_torch_check "descriptor matmul" descriptor check_descriptor_matmul.py user-kernels
# The fp8 GEMM (matmul_scaled_*: wgmma k32 on TMA copies), from PyTorch.
record_torch_check "scaled matmul" scaled check_scaled_matmul.py kernels
echo "matmul, memcheck: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
