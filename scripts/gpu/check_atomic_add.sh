#!/usr/bin/env bash
# tl.atomic_add on the GPU (examples/atomic_add.py, compiled into
# user-kernels/ by make_gpu_bundle.sh): 300 programs add their 64x128 fp32
# tiles into one (checked against a float64 sum), and 1000 programs take
# tickets from 256 int32 counters (each counter's tickets must be 0..999).
# Needs python3 with numpy. Prints PASS or FAIL per check; exits 1 on FAIL.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
BACKEND=${BACKEND:-cuda}
OUT=${OUT:-results}/atomic_add
mkdir -p "$OUT"
status=0
if ! ./bin/tile-run run user-kernels/tile_sum.json --backend "$BACKEND" --grid 300 \
    X=rand:300x64x128 S=zeros:64x128 --seed 7 --out X="$OUT/x.npy" --out S="$OUT/s.npy" \
    > "$OUT/tile_sum.log" 2>&1; then
  echo "FAIL tile_sum: tile-run failed"; tail -3 "$OUT/tile_sum.log"; status=1
fi
if ! ./bin/tile-run run user-kernels/take_tickets.json --backend "$BACKEND" --grid 1000 \
    COUNTERS=zeros:256 TICKETS=full:-1:1000x256 --out COUNTERS="$OUT/c.npy" \
    --out TICKETS="$OUT/t.npy" > "$OUT/take_tickets.log" 2>&1; then
  echo "FAIL take_tickets: tile-run failed"; tail -3 "$OUT/take_tickets.log"; status=1
fi
python3 - "$OUT" <<'PY' || status=1
import sys
import numpy as np
out = sys.argv[1]
ok = True
x, s = np.load(f"{out}/x.npy"), np.load(f"{out}/s.npy")
want = x.astype(np.float64).sum(axis=0)
err = np.abs(s - want).max() / np.abs(want).max()
good = err < 1e-5
ok &= good
print(f"{'PASS' if good else 'FAIL'} tile_sum: 300 tiles added, max error {err:.1e} of max|sum|")
c, t = np.load(f"{out}/c.npy"), np.load(f"{out}/t.npy")
good = (c == 1000).all() and (np.sort(t, axis=0) == np.arange(1000)[:, None]).all()
ok &= good
print(f"{'PASS' if good else 'FAIL'} take_tickets: 256 counters at {sorted(set(c.tolist()))}, "
      f"each program's tickets {'a permutation of 0..999' if good else 'wrong'}")
sys.exit(0 if ok else 1)
PY
exit $status
