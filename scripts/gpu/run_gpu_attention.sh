#!/usr/bin/env bash
# The attention kernels of a Tile bundle on the GPU: forward and backward
# against the float64 reference (fp16 and bf16, head dims 64 and 128, causal
# and not, causal offsets, sequence lengths that are not multiples of the
# blocks),
# compute-sanitizer memcheck on a representative set, and TFLOP/s beside
# PyTorch's scaled_dot_product_attention backends in the same run.
# Prints a table last; exits 1 if a check failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
RUN=./bin/tile-run
OUT=${OUT:-results}
mkdir -p "$OUT"
failures=0 checks=0
check() { # name, then tile-run arguments
  local name=$1; shift
  checks=$((checks + 1))
  if ! $RUN attention --backend cuda --check --seed $checks "$@" \
      > "$OUT/check.log" 2>&1; then
    failures=$((failures + 1)); echo "FAIL $name: $*"; tail -8 "$OUT/check.log"
  fi
}

echo "== attention against the float64 reference (--backend cuda)"
for dtype in f16 bf16; do
  for d in 64 128; do
    for causal in "" --causal; do
      for mode in fwd bwd; do
        for n in 1 17 100 257 1024; do
          check "$mode $dtype d$d $causal N=$n" --mode $mode --dtype $dtype \
            --head-dim $d $causal --batch 2 --heads 4 --seq $n
        done
      done
      check "fwd $dtype d$d $causal N=4096" --mode fwd --dtype $dtype \
        --head-dim $d $causal --batch 1 --heads 2 --seq 4096
    done
  done
done
# The general d128 forwards named with --kernel at ragged lengths (below
# 2048 the causal one's 128-row variant runs), and both past 1024 and 2048.
for dtype in f16 bf16; do
  t=$([ $dtype = f16 ] && echo fp16 || echo bf16)
  for n in 17 257 1000; do
    check "fwd $dtype d128 N=$n attn_fwd_${t}_d128_noncausal" --mode fwd --dtype $dtype \
      --head-dim 128 --batch 2 --heads 4 --seq $n --kernel attn_fwd_${t}_d128_noncausal
    check "fwd $dtype d128 causal N=$n attn_fwd_${t}_d128_causal" --mode fwd --dtype $dtype \
      --head-dim 128 --causal --batch 2 --heads 4 --seq $n --kernel attn_fwd_${t}_d128_causal
  done
  check "bwd $dtype d128 causal N=300 K=-37 attn_fwd_${t}_d128_causal" --mode bwd \
    --dtype $dtype --head-dim 128 --causal --causal-offset -37 --batch 2 --heads 4 --seq 300 \
    --kernel attn_fwd_${t}_d128_causal
  check "fwd $dtype d128 N=1500" --mode fwd --dtype $dtype --head-dim 128 --batch 1 \
    --heads 2 --seq 1500
  check "fwd $dtype d128 causal N=2500" --mode fwd --dtype $dtype --head-dim 128 --causal \
    --batch 1 --heads 2 --seq 2500
done
for dtype in f16 bf16; do
  for d in 64 128; do
    for causal in "" --causal; do
      check "bwd $dtype d$d $causal N=4096" --mode bwd --dtype $dtype \
        --head-dim $d $causal --batch 1 --heads 1 --seq 4096
    done
  done
done
# B*H = 64 programs along the grid's second axis.
for mode in fwd bwd; do
  check "$mode f16 d128 causal B*H=64" --mode $mode --head-dim 128 --causal --batch 16 --heads 4 --seq 257
  check "$mode bf16 d64 B*H=64" --mode $mode --dtype bf16 --head-dim 64 --batch 8 --heads 8 --seq 100
done
# Causal offsets (query i sees key j iff j <= i + K): -1 as striped ring
# attention uses it, ragged ones against the blocks, one past N (every key
# visible) and one where no row sees a key (out 0, LSE -inf).
for dtype in f16 bf16; do
  for mode in fwd bwd; do
    for offset_case in "64 1000 -1" "128 257 -1" "64 300 -37" "128 1000 45" "64 100 150" \
                       "128 100 -100"; do
      read -r d n k <<< "$offset_case"
      check "$mode $dtype d$d causal K=$k N=$n" --mode $mode --dtype $dtype \
        --head-dim $d --causal --causal-offset $k --batch 2 --heads 4 --seq $n
    done
  done
  check "bwd $dtype d64 causal K=-1 N=4096" --mode bwd --dtype $dtype --head-dim 64 \
    --causal --causal-offset -1 --batch 1 --heads 2 --seq 4096
done
check "fwd f16 d64 bnhd" --mode fwd --head-dim 64 --batch 2 --heads 3 --seq 200 --layout bnhd
check "bwd bf16 d128 bnhd causal" --mode bwd --dtype bf16 --head-dim 128 --causal --batch 2 --heads 3 --seq 200 --layout bnhd
echo "attention: $((checks - failures)) of $checks checks passed"

echo "== the puzzle forward (fp32, one head) against the float64 reference"
for n in 1 17 100 257 1024 4096; do
  checks=$((checks + 1))
  if ! $RUN flash-puzzle --backend cuda --check --seq $n > "$OUT/puzzle.log" 2>&1; then
    failures=$((failures + 1)); echo "FAIL flash-puzzle N=$n"; tail -8 "$OUT/puzzle.log"
  fi
done
echo "flash-puzzle: checked N = 1 17 100 257 1024 4096"

echo "== compute-sanitizer memcheck"
if command -v compute-sanitizer > /dev/null; then
  for args in "--mode fwd --seq 100 --head-dim 64 --causal" \
              "--mode bwd --seq 100 --head-dim 64 --causal" \
              "--mode fwd --seq 257 --head-dim 128 --dtype bf16" \
              "--mode bwd --seq 257 --head-dim 128 --dtype bf16" \
              "--mode bwd --seq 257 --head-dim 128 --causal --causal-offset -37"; do
    checks=$((checks + 1))
    if compute-sanitizer --tool memcheck --error-exitcode 9 $RUN attention $args \
        --batch 1 --heads 2 --backend cuda --check > "$OUT/memcheck.log" 2>&1; then
      echo "memcheck $args: $(grep -m1 'ERROR SUMMARY' "$OUT/memcheck.log")"
    else
      failures=$((failures + 1)); echo "FAIL memcheck $args"; tail -20 "$OUT/memcheck.log"
    fi
  done
fi

echo "== speed: fp16, B*N fixed (H=32 at D=64, H=16 at D=128), median of 20 after 3 warm-ups"
: > "$OUT/attention_bench.txt"
for d in 64 128; do
  h=$((d == 64 ? 32 : 16)); bn=$((d == 64 ? 65536 : 32768))
  for n in 1024 4096; do
    for causal in "" --causal; do
      line=$($RUN attention --mode bwd --backend cuda --bench --warmup 3 --reps 20 \
             --head-dim $d --heads $h --batch $((bn / n)) --seq $n $causal 2>&1 |
             awk '/^bench fwd/ {f=$5} /^bench bwd/ {b=$5} END {print f, b}')
      echo "tile $d $n ${causal:-full} $line" >> "$OUT/attention_bench.txt"
    done
  done
done
python3 torch_attention_bench.py >> "$OUT/attention_bench.txt" 2> "$OUT/torch.log" ||
  echo "PyTorch comparison failed: $(tail -2 "$OUT/torch.log")"

echo
echo "== TFLOP/s (fwd / bwd), fp16, same run"
printf "%-4s %-6s %-7s %-15s %-15s %-15s %-15s\n" D N mask tile sdpa-flash sdpa-cudnn sdpa-efficient
for d in 64 128; do for n in 1024 4096; do for mask in full --causal; do
  get() { awk -v i="$1" -v d=$d -v n=$n -v m=$mask '$1 == i && $2 == d && $3 == n && $4 == m {print $5 " / " $6}' "$OUT/attention_bench.txt"; }
  printf "%-4s %-6s %-7s %-15s %-15s %-15s %-15s\n" $d $n ${mask#--} "$(get tile)" "$(get flash)" "$(get cudnn)" "$(get efficient)"
done; done; done
echo "checks: $((checks - failures)) passed, $failures failed"
[ $failures -eq 0 ]
