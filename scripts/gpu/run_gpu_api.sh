#!/usr/bin/env bash
# tile.attention on the GPU machine, from a Tile bundle (or a checkout with
# build/kernels): the GPU-marked pytest tests (when pytest is installed),
# flash_attn_func against float32 SDPA, and the benchmark against PyTorch's
# SDPA backends.  Logs, JSON, CSV and plots go to $OUT (default results/).
#
#   ./run_gpu_api.sh [--quick] [--no-bench] [--pack] [-- BENCHMARK OPTIONS]
# --pack puts the benchmark's files into $OUT/bench.tar.gz.
# Exits 1 if a check failed; prints the benchmark table last.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -d "$HERE/python/tile" ]; then ROOT=$HERE; else ROOT=$(cd "$HERE/../.." && pwd); fi
if [ -d "$ROOT/tests" ]; then TESTS=$ROOT/tests; else TESTS=$ROOT/test/python; fi
OUT=${OUT:-$ROOT/results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
quick="" bench=1 pack=0 bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=--quick ;;
    --no-bench) bench=0 ;;
    --pack) pack=1 ;;
    --) shift; bench_args=("$@"); break ;;
    *) echo "run_gpu_api.sh: unknown option $1"; exit 2 ;;
  esac
  shift
done
status=0

echo "== smoke test: one flash_attn_func call"
if ! python3 -c "
import torch
from tile.attention import flash_attn_func
q = torch.randn(1, 300, 2, 64, device='cuda', dtype=torch.float16)
out = flash_attn_func(q, q, q, causal=True)
torch.cuda.synchronize()
assert torch.isfinite(out).all(), 'non-finite output'
print('flash_attn_func ran:', tuple(out.shape))
"; then
  echo "run_gpu_api.sh: the smoke test failed; nothing else is run"
  exit 1
fi

echo "== pytest: GPU-marked tile.attention tests"
if python3 -c "import pytest" 2>/dev/null; then
  python3 -m pytest -q -m gpu -p no:cacheprovider "$TESTS"/test_attention_*.py \
    > "$OUT/pytest_gpu.log" 2>&1 || status=1
  tail -1 "$OUT/pytest_gpu.log"
else
  echo "pytest is not installed here: skipped"
fi

echo "== flash_attn_func against float32 SDPA"
python3 "$HERE/check_flash_attn_api.py" $quick --out "$OUT" \
  > "$OUT/flash_attn_api_check.log" 2>&1 || status=1
sed -n '/^== flash_attn_func vs/,$p' "$OUT/flash_attn_api_check.log" | tail -60
[ -s "$OUT/flash_attn_api_check.log" ] && grep -q "^flash_attn_func: " "$OUT/flash_attn_api_check.log" ||
  { echo "the check did not finish:"; tail -20 "$OUT/flash_attn_api_check.log"; status=1; }

if [ $bench -eq 1 ]; then
  echo "== benchmark"
  python3 "$ROOT/benchmarks/attention_bench.py" $quick --out "$OUT/bench" "${bench_args[@]}" \
    > "$OUT/attention_bench.log" 2>&1 || { status=1; tail -20 "$OUT/attention_bench.log"; }
  if [ $pack -eq 1 ] && [ -d "$OUT/bench" ]; then
    tar -C "$OUT" -czf "$OUT/bench.tar.gz" bench && rm -rf "$OUT/bench"
  fi
  sed -n '/^attention_bench: /,$p' "$OUT/attention_bench.log"
fi
exit $status
