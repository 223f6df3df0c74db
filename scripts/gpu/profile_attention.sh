#!/usr/bin/env bash
# Reads the hardware counters of Tile's attention kernels and of a peer's
# for the same shape (fp16, [B, H, N, D], B*N fixed as in stage_sweep.sh),
# side by side: every kernel of the pass (the backward's preprocess, main
# kernel and postprocess), tensor-pipe and shared-memory throughput, warp
# stall reasons (cycles a warp spends stalled on each, per issued
# instruction), instruction mix; for Tile's kernels also the SASS
# instructions most sampled stalled (sass_hotspots.py); last, a table of
# each kernel's time, clock, tensor pipe, issue rate, registers and stalls
# (ncu_summary.py), and the main kernels' instructions by opcode. Needs ncu
# (Nsight Compute); clocks are left alone (--clock-control none). Run from
# the bundle:
#   [PEER=fa2|fa4|cudnn] ./profile_attention.sh fwd|bwd D N [--causal] [FOLDER] [OUT_DIR]
# PEER (default fa2): FlashAttention-2 or cuDNN through SDPA, or
# FlashAttention-4 (flash_attn.cute, ../shared/anchors/fa4/README.md).
# Writes OUT_DIR/{tile,PEER}-MODE-dD-N[-causal].{ncu-rep,txt}
# (default OUT_DIR: .) and Tile's SASS counters (-sass.csv) beside them.
set -euo pipefail
cd "$(dirname "$0")"
[ $# -ge 3 ] || { sed -n '2,17p' "$0"; exit 2; }
mode=$1 d=$2 n=$3; shift 3
causal=""; [ "${1:-}" = --causal ] && { causal=--causal; shift; }
folder=${1:-kernels} out=${2:-.} peer=${PEER:-fa2}
case "$peer" in fa2|fa4|cudnn) ;; *) echo "profile_attention: PEER is fa2, fa4 or cudnn, not '$peer'"; exit 2;; esac
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
# Every kernel of the pass: the backward's preprocess, main and postprocess.
kernels=$([ "$mode" = fwd ] && echo "attn_fwd_fp16_d${d}_$mask" \
  || echo "attn_bwd_(preprocess_fp16_d$d|fp16_d${d}_$mask|postprocess_fp16_d$d)")
ncu --clock-control none "${sections[@]}" -k "regex:^($kernels)\$" -c "$([ "$mode" = fwd ] && echo 1 || echo 3)" \
  -f -o "$out/tile-$tag" ./bin/tile-run attention --mode "$mode" --backend cuda \
  --bundle "$folder" --bench --warmup 1 --reps 1 --batch $b --heads $h --seq "$n" \
  --head-dim "$d" $causal > "$out/tile-$tag.log" 2>&1
ncu -i "$out/tile-$tag.ncu-rep" --page details > "$out/tile-$tag.txt"
# The main kernel's instructions by opcode, and the SASS instructions its
# warps were sampled stalled at most.
sass() {  # REPORT KERNEL_REGEX CSV
  ncu -i "$1" -k "regex:$2" --page source --csv --print-source sass > "$3"
  python3 sass_hotspots.py --opcodes "$3" 25
}
sass "$out/tile-$tag.ncu-rep" "^attn_${mode}_fp16_d${d}_$mask\$" "$out/tile-$tag-sass.csv" \
  > "$out/tile-$tag-opcodes.txt"
python3 sass_hotspots.py "$out/tile-$tag-sass.csv" 40 >> "$out/tile-$tag.txt"
# The peer's kernels of the pass, by name (the backward's preprocess, main
# kernel and postprocess; FlashAttention-4 compiles on the host first).
case "$peer/$mode" in
  fa2/fwd) peer_kernels=flash_fwd;; fa2/bwd) peer_kernels=flash_bwd;;
  fa4/fwd) peer_kernels=Forward;; fa4/bwd) peer_kernels=Backward;;
  cudnn/fwd) peer_kernels='(?i)fprop|fwd';; cudnn/bwd) peer_kernels='(?i)bprop|bwd|dgrad';;
esac
ncu --clock-control none "${sections[@]}" -k "regex:$peer_kernels" -c 4 \
  -f -o "$out/$peer-$tag" python3 - "$peer" "$mode" "$b" "$h" "$n" "$d" "$causal" \
  > "$out/$peer-$tag.log" 2>&1 <<'PY'
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

peer, mode, (b, h, n, d), causal = (sys.argv[1], sys.argv[2], map(int, sys.argv[3:7]),
                                    sys.argv[7] == "--causal")
if peer == "fa4":
    from flash_attn.cute import flash_attn_func
    shape = (b, n, h, d)

    def attention(q, k, v):
        out = flash_attn_func(q, k, v, causal=causal)
        return out[0] if isinstance(out, tuple) else out
else:
    backend = {"fa2": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[peer]
    shape = (b, h, n, d)

    def attention(q, k, v):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16, requires_grad=True)
           for _ in range(3))
o = attention(q, k, v)
if mode == "bwd":
    o.backward(torch.randn_like(o))
torch.cuda.synchronize()
PY
ncu -i "$out/$peer-$tag.ncu-rep" --page details > "$out/$peer-$tag.txt"
case "$peer/$mode" in
  fa2/fwd) peer_main=flash_fwd_kernel;; fa2/bwd) peer_main=flash_bwd_dq_dk_dv;;
  fa4/*) peer_main=Sm90;; *) peer_main=.;;
esac
sass "$out/$peer-$tag.ncu-rep" "$peer_main" "$out/$peer-$tag-sass.csv" \
  > "$out/$peer-$tag-opcodes.txt" || true
python3 ncu_summary.py "$out/tile-$tag.ncu-rep" "$out/$peer-$tag.ncu-rep"
paste "$out/tile-$tag-opcodes.txt" "$out/$peer-$tag-opcodes.txt" | expand -t 48
echo "profile_attention: $out/tile-$tag.txt $out/$peer-$tag.txt"
