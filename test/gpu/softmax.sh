#!/usr/bin/env bash
# The dot-free kernels of a GPU bundle on the GPU: softmax 1-4 against the
# float64 reference at sizes from 1x1 to 4096x8192, a user kernel
# (examples/vector_add.py) through the generic mode, scalar arguments of
# every width (scalar_params.py), metadata that does not describe its code
# refused, and compute-sanitizer memcheck on a representative set. One case per check in
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

echo "== scalar arguments of every width (store_scalars)"
# 2^40 + 2^20: an i64 whose high bytes matter, exact in fp32.
SCALARS="half=1.5 brain=-2.25 single=3.125 double=4.5 flag=1 byte=-7 short=300 \
wide=1099512676352"
# shellcheck disable=SC2086  # the arguments are words
if $RUN run user-kernels/store_scalars.json --backend "$BACKEND" --grid 1 \
    OUT=full:nan:8 $SCALARS --out OUT="$LOGS/scalars.npy" > "$LOGS/scalars.log" 2>&1 &&
   python3 -c "
import numpy as np
got = np.load('$LOGS/scalars.npy').tolist()
want = [1.5, -2.25, 3.125, 4.5, 1.0, -7.0, 300.0, 2.0 ** 40 + 2.0 ** 20]
print('store_scalars:', got)
assert got == want, f'expected {want}'
" >> "$LOGS/scalars.log" 2>&1; then
  echo "scalar arguments: PASS"
  record "scalar arguments of every width" pass
else
  echo "FAIL scalar arguments"; tail -5 "$LOGS/scalars.log"
  record "scalar arguments of every width" fail "$(tail -5 "$LOGS/scalars.log")"
fi

echo "== metadata that does not describe its GPU code is refused"
# vector_add's metadata with BLOCK 128 (its code's is 256), with 256
# threads a block (128), with n an i64 (its code takes 4 bytes), with a
# parameter its code lacks, and without n: the launch must fail naming the
# mismatch. The parameters' sizes need cuFuncGetParamInfo (CUDA 12.4), their
# count cuFuncGetParamCount.
has() { python3 -c "import ctypes; ctypes.CDLL('libcuda.so.1').$1" 2> /dev/null; }
edits=""
if [ "$BACKEND" != cuda ]; then
  record "metadata against its GPU code" skip "the GPU backend only"
else
  edits="constexprs threads"
  if has cuFuncGetParamInfo; then edits="$edits wide extra"
  else record "metadata against its GPU code: sizes" skip "the driver lacks cuFuncGetParamInfo"
  fi
  if has cuFuncGetParamCount; then edits="$edits missing"
  else record "metadata against its GPU code: missing" skip "the driver lacks cuFuncGetParamCount"
  fi
fi
for edit in $edits; do
  dir=$LOGS/mismatch-$edit
  mkdir -p "$dir" && cp user-kernels/vector_add.* "$dir/"
  python3 - "$dir/vector_add.json" "$edit" <<'PY'
import json
import sys

path, edit = sys.argv[1:]
meta = json.load(open(path))
if edit == "constexprs":
    meta["constexprs"]["BLOCK"] = 128
elif edit == "threads":
    meta["gpu"]["threads"] = 256
elif edit == "wide":
    next(p for p in meta["params"] if p["name"] == "n")["type"] = "i64"
elif edit == "extra":
    meta["params"].append({"name": "extra", "type": "i32"})
else:
    meta["params"] = [p for p in meta["params"] if p["name"] != "n"]
json.dump(meta, open(path, "w"))
PY
  args="n=112"
  case $edit in
    constexprs) want="constexprs (BLOCK=128) are not those its GPU code was compiled for" ;;
    threads) want="256 threads a block, its GPU code was compiled for 128" ;;
    wide) want="is 4 bytes in its GPU code, not 8" ;;
    extra) want="its GPU code takes 4 parameters, its metadata describes 5"
           args="n=112 extra=0" ;;
    missing) want="its GPU code takes 4 parameters, its metadata describes 3" args="" ;;
  esac
  # shellcheck disable=SC2086  # args are words
  $RUN run "$dir/vector_add.json" --backend "$BACKEND" --grid 1 X=rand:112 Y=rand:112 \
    Z=full:nan:112 $args > "$dir/run.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && grep -q "$want" "$dir/run.log"; then
    echo "metadata $edit: refused: $(grep -m1 "$want" "$dir/run.log")"
    record "metadata against its GPU code: $edit" pass
  else
    echo "FAIL metadata $edit (rc $rc)"; tail -5 "$dir/run.log"
    record "metadata against its GPU code: $edit" fail "rc $rc: $(tail -5 "$dir/run.log")"
  fi
done

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
