#!/bin/bash
# A/B of kernel folders through the harness, alternated twice, FA2 once in between.
cd "$(dirname "$0")"
R=$OUT/ab; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $R/gpu.txt
h() { # folder tag extra-args
  TILE_KERNEL_DIR=$PWD/$1 PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype fp16 --impl ${IMPL:-tile} \
    --n 1024,4096,16384 --no-classic --max-seconds 120 --out $R/$2 "${@:3}" > $R/$2.txt 2>&1
  echo "== $2 ($1)"; grep -E "^fp16 " $R/$2.txt
}
for round in 1 2; do
  h kernels-old old$round
  h kernels new$round
  h kernels-span128 span$round --head-dim 128
done
IMPL=sdpa-flash h kernels fa2
cd $OUT && tar czf ab.tgz ab && rm -rf ab
