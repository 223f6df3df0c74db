#!/bin/bash
# Screening of the backward's step orders: stage_sweep rounds, both dims.
# Folders (made with scripts/make_variant_folder.sh from the kernel with its
# step in each order; MAX_ROW_SPAN=128 for the d128 ones):
#   o64a: P, dP, dS, dQ, dK, dV       o64b: P, dP, dS, dQ, dV, dK
#   span128: P, dV, dP, dS, dK, dQ (the order before)
#   o128a: P, dP, dV, dS, dK, dQ      o128b: P, dP, dS, dK, dV, dQ
#   o128c: dP, P, dV, dS, dQ, dK      o128d: P, dP, dS, dV, dQ, dK
cd "$(dirname "$0")"
R=$OUT/screen; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $R/gpu.txt
export MODE=bwd TOKENS=16384 TIMED="1024 4096 16384"
for round in 1 2; do
  [ $round = 2 ] && export SEQS=1
  DIMS=64 ./stage_sweep.sh default o64a o64b > $R/d64_r$round.txt 2>&1
  DIMS=128 ./stage_sweep.sh default span128 o128a o128b o128c o128d > $R/d128_r$round.txt 2>&1
done
for f in $R/d64_r1.txt $R/d128_r1.txt; do grep -E "correctness|FAIL" $f; done
paste <(grep -E "^(default|o|span)" $R/d64_r1.txt) <(grep -E "^(default|o|span)" $R/d64_r2.txt | awk '{print $5}')
paste <(grep -E "^(default|o|span)" $R/d128_r1.txt) <(grep -E "^(default|o|span)" $R/d128_r2.txt | awk '{print $5}')
