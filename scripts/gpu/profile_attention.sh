#!/usr/bin/env bash
# Reads the hardware counters of one Tile attention kernel and of the
# FlashAttention-2 kernel PyTorch's SDPA runs for the same shape (fp16,
# [B, H, N, D], B*N fixed as in stage_sweep.sh), side by side: tensor-pipe
# and shared-memory throughput, warp stall reasons (cycles a warp spends
# stalled on each, per issued instruction), instruction mix; for Tile's
# kernel also the SASS instructions most sampled stalled (sass_hotspots.py).
# Needs ncu (Nsight Compute); clocks are left alone (--clock-control none).
# Run from the bundle:
#   ./profile_attention.sh fwd|bwd D N [--causal] [FOLDER] [OUT_DIR]
# Writes OUT_DIR/{tile,fa2}-MODE-dD-N[-causal].txt (default OUT_DIR: .),
# and Tile's report (.ncu-rep) and SASS counters (-sass.csv) beside them.
set -euo pipefail
cd "$(dirname "$0")"
[ $# -ge 3 ] || { sed -n '2,9p' "$0"; exit 2; }
mode=$1 d=$2 n=$3; shift 3
causal=""; [ "${1:-}" = --causal ] && { causal=--causal; shift; }
folder=${1:-kernels} out=${2:-.}
command -v ncu >/dev/null || { echo "profile_attention: ncu is not on the PATH"; exit 1; }
h=$((d == 64 ? 32 : 16)); b=$(((d == 64 ? 65536 : 32768) / n))
tag="$mode-d$d-$n${causal:+-causal}"
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis
          --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section WarpStateStats --section InstructionStats
          --section LaunchStats --section Occupancy --section SchedulerStats
          --section SourceCounters
          --metrics 'regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio')
mask=$([ -n "$causal" ] && echo causal || echo noncausal)
ncu --clock-control none "${sections[@]}" -k "regex:^attn_${mode}_fp16_d${d}_$mask\$" -c 1 \
  -f -o "$out/tile-$tag" ./bin/tile-run attention --mode "$mode" --backend cuda \
  --bundle "$folder" --bench --warmup 1 --reps 1 --batch $b --heads $h --seq "$n" \
  --head-dim "$d" $causal > "$out/tile-$tag.log" 2>&1
ncu -i "$out/tile-$tag.ncu-rep" --page details > "$out/tile-$tag.txt"
# The SASS instructions the warps were sampled stalled at most.
ncu -i "$out/tile-$tag.ncu-rep" --page source --csv --print-source sass \
  > "$out/tile-$tag-sass.csv"
python3 sass_hotspots.py "$out/tile-$tag-sass.csv" 40 >> "$out/tile-$tag.txt"
fa2_kernel=$([ "$mode" = fwd ] && echo flash_fwd_kernel || echo flash_bwd_dq_dk_dv)
ncu --clock-control none "${sections[@]}" -k "regex:$fa2_kernel" -c 1 \
  python3 - "$mode" "$b" "$h" "$n" "$d" "$causal" > "$out/fa2-$tag.txt" 2>&1 <<'EOF'
import sys
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F
mode, b, h, n, d, causal = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6] == "--causal"
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16,
                       requires_grad=True) for _ in range(3))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if mode == "bwd":
        o.backward(torch.randn_like(o))
torch.cuda.synchronize()
EOF
echo "profile_attention: $out/tile-$tag.txt $out/fa2-$tag.txt"
