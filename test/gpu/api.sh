#!/usr/bin/env bash
# tile.attention on the GPU, from a GPU bundle: one flash_attn_func call
# first (nothing else runs if it fails), the GPU-marked pytest tests (when
# pytest is installed), and flash_attn_func against float32 SDPA
# (check_flash_attn_api.py). Needs PyTorch with CUDA. Cases in
# $OUT/junit/api.xml, pytest_gpu.xml and flash_attn_api.xml; logs and
# flash_attn_api_check.json in $OUT/api. Exits 1 if a check failed. Part of
# run.sh.
#
#   api.sh [--quick]     --quick: fewer shapes in check_flash_attn_api.py
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
junit_begin api
TESTS=$ROOT/test/python
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
quick=""
case "${1:-}" in
  --quick) quick=--quick ;;
  "") ;;
  *) echo "api.sh: unknown option $1"; exit 2 ;;
esac

echo "== smoke test: one flash_attn_func call"
if python3 -c "
import torch
from tile.attention import flash_attn_func
q = torch.randn(1, 300, 2, 64, device='cuda', dtype=torch.float16)
out = flash_attn_func(q, q, q, causal=True)
torch.cuda.synchronize()
assert torch.isfinite(out).all(), 'non-finite output'
print('flash_attn_func ran:', tuple(out.shape))
" > "$LOGS/smoke.log" 2>&1; then
  cat "$LOGS/smoke.log"
  record "smoke test: one flash_attn_func call" pass
else
  tail -20 "$LOGS/smoke.log"
  echo "api.sh: the smoke test failed; nothing else is run"
  record "smoke test: one flash_attn_func call" fail "$(tail -20 "$LOGS/smoke.log")"
  exit 1
fi

echo "== pytest: GPU-marked tile.attention tests"
rm -f "$OUT/junit/pytest_gpu.xml"
if python3 -c "import pytest" 2>/dev/null; then
  python3 -m pytest -q -m gpu -p no:cacheprovider "$TESTS"/test_attention_*.py \
    --junitxml="$OUT/junit/pytest_gpu.xml" > "$LOGS/pytest_gpu.log" 2>&1 || elsewhere=1
  tail -1 "$LOGS/pytest_gpu.log"
  [ -s "$OUT/junit/pytest_gpu.xml" ] ||
    record "pytest -m gpu" fail "pytest wrote no report: $(tail -20 "$LOGS/pytest_gpu.log")"
else
  echo "pytest is not installed here: skipped"
  record "pytest -m gpu" skip "pytest is not installed"
fi

echo "== flash_attn_func against float32 SDPA"
rm -f "$OUT/junit/flash_attn_api.xml"
python3 "$GPU_TESTS/check_flash_attn_api.py" $quick --out "$LOGS" \
  --junit "$OUT/junit/flash_attn_api.xml" > "$LOGS/flash_attn_api_check.log" 2>&1 ||
  elsewhere=1
sed -n '/^== flash_attn_func vs/,$p' "$LOGS/flash_attn_api_check.log" | tail -60
if [ ! -s "$OUT/junit/flash_attn_api.xml" ] ||
   ! grep -q "^flash_attn_func: " "$LOGS/flash_attn_api_check.log"; then
  echo "the check did not finish:"; tail -20 "$LOGS/flash_attn_api_check.log"
  record "check_flash_attn_api.py" fail \
    "did not finish: $(tail -20 "$LOGS/flash_attn_api_check.log")"
fi
# pytest's and the check's failures are counted in their own reports.
[ "$failed" -eq 0 ] && [ "$elsewhere" -eq 0 ]
