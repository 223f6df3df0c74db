#!/usr/bin/env bash
# A handful of attention checks (fwd/bwd, d64/d128, causal and not) on the GPU,
# printing each verdict: a fast sanity run before the full run_gpu_attention.sh.
# Run from the repository root with build/gpu-bundle carried.
cd build/gpu-bundle
for a in "--mode fwd --head-dim 64 --causal --seq 17" "--mode fwd --head-dim 64 --causal --seq 257" "--mode fwd --head-dim 64 --seq 257" "--mode fwd --head-dim 128 --causal --seq 257" "--mode bwd --head-dim 128 --seq 257" "--mode bwd --head-dim 64 --causal --seq 257" "--mode bwd --head-dim 64 --causal --causal-offset -1 --seq 257" "--mode bwd --head-dim 128 --causal --causal-offset -37 --seq 257"; do
  echo "== $a"; ./bin/tile-run attention --backend cuda --check --batch 2 --heads 4 $a 2>&1 | tail -4
done
