#!/usr/bin/env bash
# TMA descriptors (CUtensorMap) encoded through the runtime on the GPU:
# check_tensor_maps.py, fp16/bf16/fp32 with the 128-byte swizzle, and a
# misaligned address refused with its rule named. Needs PyTorch with CUDA
# (skipped without it). Cases in $OUT/junit/tensor_maps.xml; the log in
# $OUT/tma. Exits 1 if a case failed. Part of run.sh.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
junit_begin tma
export PYTHONDONTWRITEBYTECODE=1
if ! python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'" 2> "$LOGS/torch.log"; then
  echo "TMA descriptors: skipped, PyTorch with CUDA is needed: $(tail -1 "$LOGS/torch.log")"
  record "TMA descriptors" skip "PyTorch with CUDA is needed"
  exit 0
fi
rm -f "$OUT/junit/tensor_maps.xml"
python3 "$GPU_TESTS/check_tensor_maps.py" --junit "$OUT/junit/tensor_maps.xml" 2>&1 |
  tee "$LOGS/check_tensor_maps.log" || elsewhere=1
[ -s "$OUT/junit/tensor_maps.xml" ] || record "check_tensor_maps.py" fail \
  "did not finish: $(tail -20 "$LOGS/check_tensor_maps.log")"
# The check's failures are counted in its own report.
[ "$failed" -eq 0 ] && [ "$elsewhere" -eq 0 ]
