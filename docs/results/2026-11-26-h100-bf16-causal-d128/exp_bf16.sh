#!/bin/bash
# bf16: the causal d128 forward's 256-row general variant (kernels/) against
# the 128-row tile at every length (kernels-old128), through the harness.
for round in 1 2; do for d in kernels kernels-old128; do
  TILE_KERNEL_DIR=$PWD/$d PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype bf16 \
    --head-dim 128 --causal yes --impl tile --no-classic --passes 1 --out $OUT/$d-$round > $OUT/$d-$round.log 2>&1
  echo "$d $round: $(grep '^bf16  128 causal' $OUT/$d-$round.log | awk '{print $4":"$6}' | tr '\n' ' ')"
done; done
PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype bf16 --head-dim 128 --causal yes \
  --impl sdpa-flash --no-classic --passes 1 --out $OUT/fa2 > $OUT/fa2.log 2>&1
echo "fa2: $(grep '^bf16  128 causal' $OUT/fa2.log | awk '{print $4":"$6}' | tr '\n' ' ')"
