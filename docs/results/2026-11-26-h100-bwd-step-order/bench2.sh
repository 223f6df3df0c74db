#!/bin/bash
# The harness again (fp16), then bf16, with the shipped kernels.
cd "$(dirname "$0")"
R=$OUT/harness2; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $R/gpu.txt
for t in fp16 bf16; do
  PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype $t --max-seconds 280 --out $R/$t > $R/$t.log 2>&1
  echo "$t rc=$?"
done
cd $OUT && tar czf harness2.tgz harness2 && rm -rf harness2
