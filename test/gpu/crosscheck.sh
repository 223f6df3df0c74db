#!/usr/bin/env bash
# Cross-checks the GPU against the interpreter at small sizes, in two halves
# because the GPU machine has no MLIR (so no interpreter):
#
#   on the GPU machine, in a bundle:  test/gpu/crosscheck.sh gpu DIR
#       runs each softmax kernel on random inputs through `tile-run run`,
#       saving inputs and outputs as .npy files in DIR (run.sh does this
#       into $OUT/crosscheck);
#   here, in the repository:          test/gpu/crosscheck.sh compare DIR
#       runs the same kernels on the same inputs in the interpreter and
#       compares the outputs element by element.
set -euo pipefail
mode=${1:?usage: crosscheck.sh gpu|compare DIR}
dir=${2:?usage: crosscheck.sh gpu|compare DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$mode" = gpu ]; then
  run=$here/../../bin/tile-run
  backend=cuda
else
  run=$here/../../build/bin/tile-run
  backend=interp
fi
# variant, block rows (grid = ceil(rows / block rows)), shapes
CASES="softmax_v1_n1024:1 softmax_v2:1 softmax_v3:1 softmax_v4:16"
SHAPES="3x100 17x257 33x1000"
mkdir -p "$dir"
failed=0
for case in $CASES; do
  kernel=${case%:*} per=${case#*:}
  for shape in $SHAPES; do
    rows=${shape%x*} cols=${shape#*x}
    grid=$(( (rows + per - 1) / per ))
    stem=$dir/${kernel}_$shape
    args=(run "$kernel" --backend "$backend" --grid "$grid"
          x_row_stride=$cols y_row_stride=$cols n_rows=$rows n_cols=$cols)
    if [ "$mode" = gpu ]; then
      "$run" "${args[@]}" X=rand:${rows}x$cols Y=full:nan:${rows}x$cols \
        --out X="$stem.x.npy" --out Y="$stem.gpu.npy" > /dev/null
    else
      "$run" "${args[@]}" X="$stem.x.npy" Y=full:nan:${rows}x$cols \
        --out Y="$stem.interp.npy" > /dev/null
      # Debian's numpy (installed by dev.sh) belongs to the system python.
      if ! /usr/bin/python3 - "$stem" <<'PY'
import sys
import numpy as np
stem = sys.argv[1]
gpu, interp = np.load(stem + ".gpu.npy"), np.load(stem + ".interp.npy")
diff = np.abs(gpu.astype(np.float64) - interp).max()
ok = np.isfinite(gpu).all() and diff <= 1e-6
print(f"{stem.rsplit('/', 1)[-1]}: max |gpu - interp| = {diff:.3g} "
      f"{'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
      then failed=1; fi
    fi
  done
done
[ "$mode" = gpu ] && echo "GPU results saved in $dir" || exit $failed
