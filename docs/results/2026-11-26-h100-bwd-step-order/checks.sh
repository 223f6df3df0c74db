#!/bin/bash
# The new backward kernels: the attention checks (float64 reference,
# memcheck), racecheck of the four fp16 backward kernels, the API checks.
cd "$(dirname "$0")"
R=$OUT/checks; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $R/gpu.txt
export PATH=$PATH:/usr/local/cuda/bin
OUT=$R/attention ./run_gpu_attention.sh > $R/attention.log 2>&1; echo "run_gpu_attention.sh rc=$?"
grep -E "checks|passed|FAIL|memcheck" $R/attention.log | tail -8
for d in 64 128; do for c in "" --causal; do
  compute-sanitizer --tool racecheck ./bin/tile-run attention --mode bwd --backend cuda --bundle kernels \
    --batch 1 --heads 2 --seq 200 --head-dim $d $c 2>&1 | grep -E "^kernel attn_bwd_|RACECHECK SUMMARY" | head -4
done; done | tee $R/racecheck.log
OUT=$R/api ./run_gpu_api.sh --no-bench > $R/api.log 2>&1; echo "run_gpu_api.sh rc=$?"
grep -E "passed|failed|checks|FAIL" $R/api.log | tail -6
cd $OUT && tar czf checks.tgz checks && rm -rf checks
