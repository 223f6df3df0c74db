#!/usr/bin/env bash
# Compares kernel folders beside kernels/: kernels-s<S>, compiled with
# another num_stages (`scripts/make_variant_folder.sh sS --set num_stages=S`),
# or kernels-<TAG>, with other block sizes or options (the same script):
# correctness against the float64 reference at ragged lengths, then
# TFLOP/s by tile-run --bench (Tile's folders against one another; against
# its peers, benchmarks/attention_bench.py), fp16, B*N fixed (TOKENS). Prints
# one table last.
# Run from the bundle: [MODE=fwd|bwd] ./stage_sweep.sh [S|TAG ...] (default:
# the forward; every kernels-s*). "default" is kernels/, as the manifest says.
# SEQS: the checked lengths; MASKS: "full --causal" (both, the default),
# "full" or "--causal"; TOKENS: B*N of the timed shapes (default 65536 at
# d64, 32768 at d128; the benchmark harness uses 16384); TIMED: the timed
# lengths (default "4096 16384"); DIMS: the head dims (default "64 128");
# LAYOUT: bnhd (the default: what flash_attn_func and FA2 take) or bhnd.
cd "$(dirname "$0")"
RUN=./bin/tile-run
LAYOUT=${LAYOUT:-bnhd}
MODE=${MODE:-fwd}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(default $(ls -d kernels-s* 2>/dev/null | sed 's/kernels-s//'))
folder() {
  if [ "$1" = default ]; then echo kernels
  elif [ -d "kernels-$1" ]; then echo "kernels-$1"
  else echo "kernels-s$1"; fi
}
masks=${MASKS:-full --causal}
flag() { [ "$1" = full ] || echo "$1"; }  # full: no --causal
failures=0
for s in "${stages[@]}"; do
  for d in ${DIMS:-64 128}; do for t in f16 bf16; do for mask in $masks; do
    for n in ${SEQS:-1 100 257 1000}; do
      if ! out=$($RUN attention --mode $MODE --backend cuda --layout $LAYOUT --bundle "$(folder $s)" --check \
                 --batch 2 --heads 3 --seq $n --head-dim $d --dtype $t $(flag $mask) 2>&1); then
        failures=$((failures + 1)); echo "FAIL stages=$s d=$d $t n=$n $mask"; echo "$out" | tail -3
      fi
    done
  done; done; done
done
echo "correctness: $failures failures (layout $LAYOUT)"
printf "%-8s %-4s %-6s %-7s %s\n" stages D N mask "$MODE TFLOP/s"
for s in "${stages[@]}"; do
  for d in ${DIMS:-64 128}; do
    h=$((d == 64 ? 32 : 16)); bn=${TOKENS:-$((d == 64 ? 65536 : 32768))}
    for n in ${TIMED:-4096 16384}; do for mask in $masks; do
      tflops=$($RUN attention --mode $MODE --backend cuda --layout $LAYOUT --bundle "$(folder $s)" --bench \
               --warmup 3 --reps 20 --head-dim $d --heads $h --batch $((bn / n)) --seq $n \
               $(flag $mask) 2>&1 | awk -v m=$MODE '$1 == "bench" && $2 == m ":" {print $5}')
      printf "%-8s %-4s %-6s %-7s %s\n" "$s" $d $n "$mask" "$tflops"
    done; done
  done
done
