#!/bin/bash
# GPU pytest, then the benchmark harness (fp16, all shapes) with the shipped kernels.
cd "$(dirname "$0")"
R=$OUT/harness; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $R/gpu.txt
PYTHONPATH=python timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_attention_*.py > $R/pytest_gpu.log 2>&1
tail -1 $R/pytest_gpu.log
PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype fp16 --max-seconds 420 --out $R/bench > $R/bench.log 2>&1
echo "bench rc=$?"
cd $OUT && tar czf harness.tgz harness && rm -rf harness
