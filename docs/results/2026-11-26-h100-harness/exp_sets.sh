#!/bin/bash
# tile-run --bench with one input set and with two, against the harness, d128 forward.
for c in "" --causal; do for n in 4096 16384; do
  for sets in 1 2 1 2; do
    echo "tile-run d128 fwd ${c:-full} N=$n sets=$sets $(./bin/tile-run attention --mode fwd --backend cuda --layout bnhd --bench --bench-sets $sets --warmup 3 --reps 20 --head-dim 128 --heads 16 --batch $((16384/n)) --seq $n $c 2>&1 | awk '$1=="bench" && $2=="fwd:" {print $5}')"
  done
done; done
for mask in no yes; do
  PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype fp16 --head-dim 128 --causal $mask --n 4096,16384 --impl tile --no-classic --out $OUT/h-$mask 2>&1 | grep "^fp16 d128"
done
