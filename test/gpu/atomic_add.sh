#!/usr/bin/env bash
# tl.atomic_add on the GPU (examples/atomic_add.py, compiled into
# user-kernels/ by make_gpu_bundle.sh): 300 programs add their 64x128 fp32
# tiles into one (checked against a float64 sum), and 1000 programs take
# tickets from 256 int32 counters (each counter's tickets must be 0..999).
# Needs python3 with numpy. Prints PASS or FAIL per check; one case each in
# $OUT/junit/atomic_add.xml; exits 1 on FAIL. Part of run.sh.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 2
junit_begin atomic_add
rm -f "$LOGS"/*.npy
ran=""   # the kernels that ran
if ! $RUN run user-kernels/tile_sum.json --backend "$BACKEND" --grid 300 \
    X=rand:300x64x128 S=zeros:64x128 --seed 7 --out X="$LOGS/x.npy" --out S="$LOGS/s.npy" \
    > "$LOGS/tile_sum.log" 2>&1; then
  echo "FAIL tile_sum: tile-run failed"; tail -3 "$LOGS/tile_sum.log"
  record "tile_sum" fail "tile-run failed: $(tail -3 "$LOGS/tile_sum.log")"
else
  ran="$ran tile_sum"
fi
if ! $RUN run user-kernels/take_tickets.json --backend "$BACKEND" --grid 1000 \
    COUNTERS=zeros:256 TICKETS=full:-1:1000x256 --out COUNTERS="$LOGS/c.npy" \
    --out TICKETS="$LOGS/t.npy" > "$LOGS/take_tickets.log" 2>&1; then
  echo "FAIL take_tickets: tile-run failed"; tail -3 "$LOGS/take_tickets.log"
  record "take_tickets" fail "tile-run failed: $(tail -3 "$LOGS/take_tickets.log")"
else
  ran="$ran take_tickets"
fi
# The results of the kernels that ran, one PASS or FAIL line each.
python3 - "$LOGS" $ran > "$LOGS/check.log" 2>&1 <<'PY'
import sys
import numpy as np
out, ran = sys.argv[1], sys.argv[2:]
ok = True
if "tile_sum" in ran:
    x, s = np.load(f"{out}/x.npy"), np.load(f"{out}/s.npy")
    want = x.astype(np.float64).sum(axis=0)
    err = np.abs(s - want).max() / np.abs(want).max()
    good = err < 1e-5
    ok &= good
    print(f"{'PASS' if good else 'FAIL'} tile_sum: 300 tiles added, max error {err:.1e} "
          "of max|sum|")
if "take_tickets" in ran:
    c, t = np.load(f"{out}/c.npy"), np.load(f"{out}/t.npy")
    good = (c == 1000).all() and (np.sort(t, axis=0) == np.arange(1000)[:, None]).all()
    ok &= good
    print(f"{'PASS' if good else 'FAIL'} take_tickets: 256 counters at "
          f"{sorted(set(c.tolist()))}, each program's tickets "
          f"{'a permutation of 0..999' if good else 'wrong'}")
sys.exit(0 if ok else 1)
PY
cat "$LOGS/check.log"
for name in $ran; do
  line=$(grep -E "^(PASS|FAIL) $name:" "$LOGS/check.log")
  case $line in
    PASS*) record "$name" pass ;;
    FAIL*) record "$name" fail "$line" ;;
    *) record "$name" fail "the check did not finish: $(tail -3 "$LOGS/check.log")" ;;
  esac
done
[ "$failed" -eq 0 ]
