#!/usr/bin/env bash
# The attention kernels of a GPU bundle on the GPU: forward and backward
# against the float64 reference (fp16 and bf16, head dims 32-256, causal
# and not, causal offsets, sequence lengths that are not multiples of the
# blocks), the puzzle forward, and compute-sanitizer memcheck on a
# representative set. One case per check in $OUT/junit/attention.xml; exits
# 1 if one failed. Part of run.sh.
#
#   attention.sh [--quick]
# --quick: eight checks only (fwd/bwd, d64/d128, causal and not, offsets),
# a fast sanity run before the whole set.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 2
junit_begin attention
checks=0   # each check's number: its seed
check() { # name, then tile-run arguments
  local name=$1; shift
  checks=$((checks + 1))
  if $RUN attention --backend "$BACKEND" --check --seed $checks "$@" \
      > "$LOGS/check.log" 2>&1; then
    record "$name" pass
  else
    echo "FAIL $name: $*"; tail -8 "$LOGS/check.log"
    record "$name" fail "tile-run attention $*: $(tail -8 "$LOGS/check.log")"
  fi
}

if [ "${1:-}" = --quick ]; then
  echo "== eight attention checks against the float64 reference (--backend $BACKEND)"
  for a in "--mode fwd --head-dim 64 --causal --seq 17" "--mode fwd --head-dim 64 --causal --seq 257" \
           "--mode fwd --head-dim 64 --seq 257" "--mode fwd --head-dim 128 --causal --seq 257" \
           "--mode bwd --head-dim 128 --seq 257" "--mode bwd --head-dim 64 --causal --seq 257" \
           "--mode bwd --head-dim 64 --causal --causal-offset -1 --seq 257" \
           "--mode bwd --head-dim 128 --causal --causal-offset -37 --seq 257"; do
    if $RUN attention --backend "$BACKEND" --check --batch 2 --heads 4 $a \
        > "$LOGS/check.log" 2>&1; then
      record "quick $a" pass
    else
      echo "FAIL quick $a"; tail -8 "$LOGS/check.log"
      record "quick $a" fail "$(tail -8 "$LOGS/check.log")"
    fi
  done
  echo "attention --quick: $passed of $((passed + failed)) checks passed"
  [ "$failed" -eq 0 ]
  exit
fi

echo "== attention against the float64 reference (--backend $BACKEND)"
for dtype in f16 bf16; do
  for d in 32 64 128 256; do
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
# The d128 forwards (two warpgroups taking turns) named with --kernel at
# ragged lengths, and both past 1024 and 2048 (under TILE_TARGET=sm_80, the
# sm_80 ones: their names end in _sm80).
suffix=${TILE_TARGET:+_${TILE_TARGET/_/}}
for dtype in f16 bf16; do
  t=$([ $dtype = f16 ] && echo fp16 || echo bf16)
  for n in 17 257 1000; do
    check "fwd $dtype d128 N=$n attn_fwd_${t}_d128_noncausal$suffix" --mode fwd \
      --dtype $dtype --head-dim 128 --batch 2 --heads 4 --seq $n \
      --kernel attn_fwd_${t}_d128_noncausal$suffix
    check "fwd $dtype d128 causal N=$n attn_fwd_${t}_d128_causal$suffix" --mode fwd \
      --dtype $dtype --head-dim 128 --causal --batch 2 --heads 4 --seq $n \
      --kernel attn_fwd_${t}_d128_causal$suffix
  done
  check "bwd $dtype d128 causal N=300 K=-37 attn_fwd_${t}_d128_causal$suffix" --mode bwd \
    --dtype $dtype --head-dim 128 --causal --causal-offset -37 --batch 2 --heads 4 --seq 300 \
    --kernel attn_fwd_${t}_d128_causal$suffix
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
echo "attention: $passed of $checks checks passed"

echo "== the puzzle forward (fp32, one head) against the float64 reference"
for n in 1 17 100 257 1024 4096; do
  checks=$((checks + 1))
  if $RUN flash-puzzle --backend "$BACKEND" --check --seq $n > "$LOGS/puzzle.log" 2>&1; then
    record "flash-puzzle N=$n" pass
  else
    echo "FAIL flash-puzzle N=$n"; tail -8 "$LOGS/puzzle.log"
    record "flash-puzzle N=$n" fail "$(tail -8 "$LOGS/puzzle.log")"
  fi
done
echo "flash-puzzle: checked N = 1 17 100 257 1024 4096"

echo "== compute-sanitizer memcheck"
command -v compute-sanitizer > /dev/null || echo "compute-sanitizer not found: memcheck skipped"
# Two heads, and 100 for the persistent causal d128 forward, whose programs
# then take several pairs of blocks each.
for args in "--mode fwd --seq 100 --head-dim 64 --causal --heads 2" \
            "--mode bwd --seq 100 --head-dim 64 --causal --heads 2" \
            "--mode fwd --seq 257 --head-dim 128 --dtype bf16 --heads 2" \
            "--mode bwd --seq 257 --head-dim 128 --dtype bf16 --heads 2" \
            "--mode bwd --seq 257 --head-dim 128 --causal --causal-offset -37 --heads 2" \
            "--mode fwd --seq 300 --head-dim 128 --causal --causal-offset -37 --heads 100"; do
  checks=$((checks + 1))
  if ! command -v compute-sanitizer > /dev/null; then
    record "memcheck $args" skip "compute-sanitizer not found"
  elif compute-sanitizer --tool memcheck --error-exitcode 9 $RUN attention $args \
      --batch 1 --backend "$BACKEND" --check > "$LOGS/memcheck.log" 2>&1; then
    echo "memcheck $args: $(grep -m1 'ERROR SUMMARY' "$LOGS/memcheck.log")"
    record "memcheck $args" pass
  else
    echo "FAIL memcheck $args"; tail -20 "$LOGS/memcheck.log"
    record "memcheck $args" fail "$(tail -20 "$LOGS/memcheck.log")"
  fi
done
# Shared-memory hazards and barrier misuse: wgmma reads what the TMA and the
# threads' stores wrote (the d128 backward's dS^T, read by both warpgroups
# while their products are in flight), across proxy fences and barriers.
echo "== compute-sanitizer racecheck, synccheck"
for tool in racecheck synccheck; do
  for args in "--mode fwd --seq 100 --head-dim 64 --causal --heads 2" \
              "--mode fwd --seq 257 --head-dim 128 --dtype bf16 --heads 2" \
              "--mode fwd --seq 300 --head-dim 128 --causal --heads 100" \
              "--mode bwd --seq 100 --head-dim 64 --causal --heads 2" \
              "--mode bwd --seq 257 --head-dim 128 --causal --causal-offset -37 --heads 2"; do
    checks=$((checks + 1))
    if ! command -v compute-sanitizer > /dev/null; then
      record "$tool $args" skip "compute-sanitizer not found"
    elif compute-sanitizer --tool "$tool" --error-exitcode 9 $RUN attention $args \
        --batch 1 --backend "$BACKEND" --check > "$LOGS/$tool.log" 2>&1; then
      echo "$tool $args: $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$LOGS/$tool.log")"
      record "$tool $args" pass
    else
      echo "FAIL $tool $args"; tail -20 "$LOGS/$tool.log"
      record "$tool $args" fail "$(tail -20 "$LOGS/$tool.log")"
    fi
  done
done
# The fp8 forward (e4m3, V transposed, descale factors), from PyTorch.
record_torch_check "fp8 attention" fp8 check_fp8_attention.py kernels
echo "attention, puzzle, memcheck, racecheck, synccheck: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
