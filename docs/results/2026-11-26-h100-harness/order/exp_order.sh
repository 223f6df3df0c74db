#!/bin/bash
# Does the order of the implementations in the harness move Tile / FA2?
# Each shape runs its implementations back to back, so the second runs on
# a GPU the first has just heated.
for round in 1 2; do
  for order in tile,sdpa-flash sdpa-flash,tile; do
    PYTHONPATH=python python3 benchmarks/attention_bench.py --dtype fp16 --n 4096,16384 \
      --impl $order --no-classic --out $OUT/order-$order-$round > $OUT/order-$order-$round.log 2>&1
    echo "== order $order, round $round"; grep -E "^fp16 +(64|128) (full|causal)" $OUT/order-$order-$round.log
  done
done
