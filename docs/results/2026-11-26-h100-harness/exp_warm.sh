#!/bin/bash
# Does a longer warm-up (a hotter GPU, lower clocks) bring tile-run's d128
# forward down to the harness's numbers?
bench() { ./bin/tile-run attention --mode fwd --backend cuda --layout bnhd --bench --warmup $1 --reps $2 \
  --head-dim 128 --heads 16 --batch $((16384/$3)) --seq $3 $4 2>&1 | awk '$1=="bench" && $2=="fwd:" {print $5}'; }
for round in 1 2; do
  for w in 3 4000; do
    for c in "" --causal; do for n in 4096 16384; do
      echo "warmup=$w reps=20 ${c:-full} N=$n: $(bench $w 20 $n "$c")  sm clock after: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)"
    done; done
  done
done
