#!/usr/bin/env bash
# Adds a kernel folder for a block-size sweep to a GPU bundle: kernels-TAG,
# a copy of the bundle's kernels/ in which the variants named with --only
# are recompiled with the --set overrides (python3 -m tile.compile
# --manifest), and prints ptxas's registers and spills for each of them.
#
#   scripts/make_variant_folder.sh TAG --only NAME [--only NAME ...] \
#       --set NAME=VALUE [--set ...]        (BUNDLE: default build/gpu-bundle)
#
# Then, in the bundle on the GPU machine: MODE=bwd ./stage_sweep.sh default TAG
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${TILE_BUILD_DIR:-$ROOT/build}
BUNDLE=${BUNDLE:-$BUILD/gpu-bundle}
[ $# -ge 3 ] || { sed -n '2,11p' "$0"; exit 2; }
TAG=$1; shift
[ -d "$BUNDLE/kernels" ] || { echo "no $BUNDLE/kernels: run scripts/make_gpu_bundle.sh"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TILE_COMPILE="$BUILD/bin/tile-compile" PYTHONPATH="$ROOT/python" \
  python3 -m tile.compile --manifest --out-dir "$WORK" "$@"
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
for ptx in "$WORK"/*.ptx; do
  if [ -x "$PTXAS" ]; then
    echo "$(basename "$ptx" .ptx): $("$PTXAS" -arch=sm_90a -v "$ptx" -o /dev/null 2>&1 |
      grep -o 'Used [0-9]* registers\|[0-9]* bytes spill stores' | paste -sd, -)"
  fi
done
rm -rf "$BUNDLE/kernels-$TAG"
cp -r "$BUNDLE/kernels" "$BUNDLE/kernels-$TAG"
cp "$WORK"/*.json "$WORK"/*.ptx "$BUNDLE/kernels-$TAG/"
cp "$WORK"/*.cubin "$BUNDLE/kernels-$TAG/" 2>/dev/null || true
echo "make_variant_folder: $BUNDLE/kernels-$TAG"
