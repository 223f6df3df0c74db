#!/bin/bash
# The shipped kernels and the max-row-span=128 d128 backward through the
# harness, alternated twice, FA2 once; then the span kernels' checks.
cd "$(dirname "$0")"
R=$OUT/ab; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $R/gpu.txt
h() { # folder tag
  TILE_KERNEL_DIR=$PWD/$1 PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype fp16 --impl ${IMPL:-tile} \
    --head-dim 128 --n 1024,4096,16384 --no-classic --max-seconds 120 --out $R/$2 > $R/$2.txt 2>&1
  echo "== $2 ($1)"; grep -E "^fp16 d" $R/$2.txt
}
for round in 1 2; do h kernels shipped$round; h kernels-span128 span$round; done
IMPL=sdpa-flash h kernels fa2
MODE=bwd DIMS=128 TIMED=" " ./stage_sweep.sh span128 2>&1 | tail -2 | tee $R/checks.txt
./bin/tile-run attention --mode bwd --backend cuda --bundle kernels-span128 --check --batch 2 --heads 3 \
  --seq 777 --head-dim 128 --dtype bf16 --causal --causal-offset -37 2>&1 | tail -1 | tee -a $R/checks.txt
cd $OUT && tar czf ab.tgz ab && rm -rf ab
