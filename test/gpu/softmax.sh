#!/usr/bin/env bash
# The dot-free kernels of a GPU bundle on the GPU: softmax 1-4 against the
# float64 reference at sizes from 1x1 to 4096x8192, a user kernel
# (examples/vector_add.py) through the generic mode, and compute-sanitizer
# memcheck on a representative set. One case per check in
# $OUT/junit/softmax.xml; exits 1 if one failed. Part of run.sh.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 2
junit_begin softmax
checks=0   # each check's number: the softmax checks' seed

echo "== softmax 1-4 against the float64 reference (--backend $BACKEND)"
SIZES="1x1 1x7 3x100 17x100 100x257 257x1000 1000x1024 1024x1025 333x4097 \
4096x1 4096x4096 4096x8192 7x8191"
for variant in 1 2 3 4; do
  for size in $SIZES; do
    rows=${size%x*} cols=${size#*x}
    checks=$((checks + 1))
    log=$LOGS/sm$variant-$size.log
    if $RUN softmax --variant "$variant" --rows "$rows" --cols "$cols" \
        --backend "$BACKEND" --check --seed "$checks" > "$log" 2>&1; then
      record "softmax v$variant $size" pass
    else
      echo "FAIL softmax v$variant $size"; tail -5 "$log"
      record "softmax v$variant $size" fail "$(tail -5 "$log")"
    fi
  done
done
echo "softmax: $passed of $checks checks passed"

echo "== a user kernel through the generic mode"
checks=$((checks + 1))
if $RUN run user-kernels/vector_add.json --backend "$BACKEND" --grid 40 \
    X=rand:10000 Y=rand:10000 Z=full:nan:10000 n=10000 \
    --out X="$LOGS/x.npy" --out Y="$LOGS/y.npy" --out Z="$LOGS/z.npy" > "$LOGS/user.log" 2>&1 &&
   python3 -c "
import numpy as np
x, y, z = (np.load('$LOGS/%s.npy' % n) for n in 'xyz')
err = np.abs(z - (x + y)).max()
print('vector_add max error', err)
assert err == 0
" >> "$LOGS/user.log" 2>&1; then
  echo "user kernel vector_add: PASS"
  record "user kernel vector_add" pass
else
  echo "FAIL user kernel"; tail -5 "$LOGS/user.log"
  record "user kernel vector_add" fail "$(tail -5 "$LOGS/user.log")"
fi

echo "== compute-sanitizer memcheck"
MEMCHECK="--variant 1 --rows 17 --cols 100|--variant 2 --rows 5 --cols 3000|\
--variant 3 --rows 9 --cols 1025|--variant 4 --rows 33 --cols 257"
IFS='|' read -ra memcheck_cases <<< "$MEMCHECK"
for args in "${memcheck_cases[@]}"; do
  if ! command -v compute-sanitizer > /dev/null; then
    record "memcheck softmax $args" skip "compute-sanitizer not found"
    continue
  fi
  if compute-sanitizer --tool memcheck --error-exitcode 9 $RUN softmax $args \
      --backend "$BACKEND" --check > "$LOGS/memcheck.log" 2>&1; then
    echo "memcheck softmax $args: $(grep -m1 'ERROR SUMMARY' "$LOGS/memcheck.log")"
    record "memcheck softmax $args" pass
  else
    echo "FAIL memcheck softmax $args"; tail -20 "$LOGS/memcheck.log"
    record "memcheck softmax $args" fail "$(tail -20 "$LOGS/memcheck.log")"
  fi
done
command -v compute-sanitizer > /dev/null || echo "compute-sanitizer not found: memcheck skipped"
echo "softmax, generic mode, memcheck: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
