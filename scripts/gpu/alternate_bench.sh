#!/usr/bin/env bash
# Times kernel folders against one another, alternated: three rounds, each
# round timing every folder in turn at every shape, so that a GPU warming
# or a neighbour's load falls on all of them alike; prints the median of
# the rounds. tile-run's timing (--bench), fp16, B*N = 16384 (the harness's),
# heads 32 at d64 and 16 at d128.
# Run from the bundle: [MODE=fwd|bwd] [DIMS="64 128"] [NS="1024 2048 4096 16384"]
#   ./alternate_bench.sh default TAG...   (default: kernels/; TAG: kernels-TAG,
#   made by scripts/make_variant_folder.sh). Check the folders first
#   (stage_sweep.sh with TIMED=""). Raw times in alternate_bench.txt.
# A folder whose kernels take other arguments (a baseline from before a
# signature change) runs under its own bin/tile-run-TAG when there is one.
set -euo pipefail
cd "$(dirname "$0")"
[ $# -ge 1 ] || { sed -n '2,10p' "$0"; exit 2; }
MODE=${MODE:-fwd}
folder() { [ "$1" = default ] && echo kernels || echo "kernels-$1"; }
runner() { [ -x "bin/tile-run-$1" ] && echo "bin/tile-run-$1" || echo bin/tile-run; }
for f in "$@"; do
  [ -d "$(folder "$f")" ] || { echo "alternate_bench: no folder $(folder "$f")"; exit 1; }
done
for round in 1 2 3; do
  for d in ${DIMS:-64 128}; do for mask in full --causal; do
    for n in ${NS:-1024 2048 4096 16384}; do
      h=$((d == 64 ? 32 : 16))
      for f in "$@"; do
        t=$("./$(runner "$f")" attention --mode "$MODE" --backend cuda --bundle "$(folder "$f")" \
              --bench --warmup 3 --reps 30 --head-dim $d --heads $h --batch $((16384 / n)) \
              --seq $n $([ $mask = full ] || echo --causal) 2>&1 |
            awk -v m="$MODE" '$1 == "bench" && $2 == m ":" {print $5}')
        echo "$round $f $d $mask $n ${t:-nan}"
      done
    done
  done; done
done > alternate_bench.txt
python3 - "$MODE" "$@" <<'EOF'
import collections
import statistics
import sys

mode, folders = sys.argv[1], sys.argv[2:]
times = collections.defaultdict(list)
for line in open("alternate_bench.txt"):
    _, folder, d, mask, n, tflops = line.split()
    times[(int(d), mask, int(n), folder)].append(float(tflops))
print(f"{mode} TFLOP/s, median of 3 alternated rounds")
print("D    mask     N      " + " ".join(f"{f:>9}" for f in folders))
for d, mask, n in sorted({key[:3] for key in times}):
    medians = [statistics.median(times[(d, mask, n, f)]) for f in folders]
    print(f"{d:<4} {mask:<8} {n:<6} " + " ".join(f"{m:9.0f}" for m in medians))
EOF
