#!/usr/bin/env bash
# The GPU tests of a Tile bundle (made by scripts/make_gpu_bundle.sh): every
# dot-free kernel checked against the float64 reference on the GPU at sizes
# from 1x1 to 4096x8192, compute-sanitizer memcheck on a representative set,
# a user kernel through the generic mode, and softmax bandwidth beside
# PyTorch's in the same run. Prints a table last; exits 1 if anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
RUN=./bin/tile-run
OUT=${OUT:-results}
mkdir -p "$OUT"
failures=0
checks=0

nvidia-smi -L 2>/dev/null || true
echo "== softmax 1-4 against the float64 reference (--backend cuda)"
SIZES="1x1 1x7 3x100 17x100 100x257 257x1000 1000x1024 1024x1025 333x4097 \
4096x1 4096x4096 4096x8192 7x8191"
for variant in 1 2 3 4; do
  for size in $SIZES; do
    rows=${size%x*} cols=${size#*x}
    checks=$((checks + 1))
    if ! $RUN softmax --variant "$variant" --rows "$rows" --cols "$cols" \
        --backend cuda --check --seed "$checks" > "$OUT/sm$variant-$size.log" 2>&1; then
      failures=$((failures + 1))
      echo "FAIL softmax v$variant $size"; tail -5 "$OUT/sm$variant-$size.log"
    fi
  done
done
echo "softmax: $((checks - failures)) of $checks checks passed"

echo "== the bwd preprocess kernel through the generic mode, and a user kernel"
checks=$((checks + 1))
if $RUN run user-kernels/vector_add.json --backend cuda --grid 40 \
    X=rand:10000 Y=rand:10000 Z=full:nan:10000 n=10000 \
    --out X="$OUT/x.npy" --out Y="$OUT/y.npy" --out Z="$OUT/z.npy" > "$OUT/user.log" 2>&1 &&
   python3 -c "
import numpy as np
x, y, z = (np.load('$OUT/%s.npy' % n) for n in 'xyz')
err = np.abs(z - (x + y)).max()
print('vector_add max error', err)
assert err == 0
" >> "$OUT/user.log" 2>&1; then
  echo "user kernel vector_add: PASS"
else
  failures=$((failures + 1)); echo "FAIL user kernel"; tail -5 "$OUT/user.log"
fi

echo "== tl.atomic_add (examples/atomic_add.py)"
checks=$((checks + 1))
if ! OUT="$OUT" ./check_atomic_add.sh; then
  failures=$((failures + 1))
fi

echo "== compute-sanitizer memcheck"
if command -v compute-sanitizer > /dev/null; then
  for args in "--variant 1 --rows 17 --cols 100" "--variant 2 --rows 5 --cols 3000" \
              "--variant 3 --rows 9 --cols 1025" "--variant 4 --rows 33 --cols 257"; do
    checks=$((checks + 1))
    if compute-sanitizer --tool memcheck --error-exitcode 9 $RUN softmax $args \
        --backend cuda --check > "$OUT/memcheck.log" 2>&1; then
      echo "memcheck softmax $args: $(grep -m1 'ERROR SUMMARY' "$OUT/memcheck.log")"
    else
      failures=$((failures + 1)); echo "FAIL memcheck softmax $args"
      tail -20 "$OUT/memcheck.log"
    fi
  done
else
  echo "compute-sanitizer not found: memcheck skipped"
fi

echo "== bandwidth: Tile softmax (median of 100 after 10 warm-ups, CUDA events)"
: > "$OUT/bench.txt"
for size in 4096x1024 4096x4096 4096x8192; do
  rows=${size%x*} cols=${size#*x}
  for variant in 1 2 3 4; do
    gbs=$($RUN softmax --variant $variant --rows $rows --cols $cols --backend cuda \
          --bench | awk '/^bench:/ {print $4}')
    echo "tile v$variant $size $gbs" >> "$OUT/bench.txt"
  done
done
if python3 -c "import torch" 2> /dev/null; then
  python3 torch_softmax_bench.py 4096x1024 4096x4096 4096x8192 >> "$OUT/bench.txt"
else
  echo "PyTorch not found: no comparison"
fi

echo
echo "== softmax bandwidth, GB/s (read + write of fp32), same run"
printf "%-10s %8s %8s %8s %8s %8s\n" size tile-v1 tile-v2 tile-v3 tile-v4 torch
for size in 4096x1024 4096x4096 4096x8192; do
  row=$(awk -v s=$size '$2 == s || $3 == s' "$OUT/bench.txt")
  get() { echo "$row" | awk -v k="$1" '$1 " " $2 == k || ($1 == "torch" && k == "torch") {print $NF}' | head -1; }
  printf "%-10s %8s %8s %8s %8s %8s\n" $size "$(get "tile v1")" "$(get "tile v2")" \
    "$(get "tile v3")" "$(get "tile v4")" "$(get torch)"
done
echo "checks: $((checks - failures)) passed, $failures failed"
[ $failures -eq 0 ]
