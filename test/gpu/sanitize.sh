#!/usr/bin/env bash
# compute-sanitizer over every shipped kernel: memcheck (out-of-bounds and
# misaligned accesses) and initcheck (reads of global memory never written)
# by default; TOOLS="racecheck synccheck" (shared-memory hazards, barrier
# misuse) over the same cases. Each causal and non-causal attention variant
# (and the _n4096 forwards) forward and backward (the backward with its
# preprocess and postprocess) through tile-run --kernel at a ragged length,
# against the float64 reference; the softmax kernels, the puzzle forward
# and the GEMMs through tile-run; the window, softcap, ALiBi, dropout and
# deterministic variants (run_attention_variants.py), decoding, the fp8
# forward and the scaled GEMM from PyTorch (memcheck on Tile's kernels
# alone, initcheck on every kernel: see ours below).
#
# Not part of run.sh's default parts (it takes long): test/gpu/run.sh
# sanitize. ONLY (a regex) keeps the cases whose names match it, to split a
# run over several calls: ONLY='d(32|64)' test/gpu/run.sh sanitize.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 2
junit_begin sanitize
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
TOOLS=${TOOLS:-memcheck initcheck}
ONLY=${ONLY:-.}

# sanitized TOOL NAME COMMAND...: one case, the command under the tool.
sanitized() {
  local tool=$1 name="$2 $1" log=$LOGS/last.log
  shift 2
  [[ $name =~ $ONLY ]] || return 0
  if ! command -v compute-sanitizer > /dev/null; then
    record "$name" skip "compute-sanitizer not found"
  elif compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" > "$log" 2>&1; then
    echo "$name: $(grep -m1 'SUMMARY:' "$log")"
    record "$name" pass
  else
    echo "FAIL $name"; tail -20 "$log"
    record "$name" fail "$(tail -20 "$log")"
  fi
}

# The kernel filter of a case launched from PyTorch: memcheck checks only
# Tile's kernels (those whose names start with $2; PyTorch's are not ours
# to check). initcheck watches every kernel: memory a kernel it does not
# instrument writes, it takes as never written (with the filter, decoding's
# lengths, which PyTorch computes, were reported as read uninitialized at
# attn_decode's load of KV_LENS; without it, no error: H200, 2026-11-29).
ours() { [ "$1" = initcheck ] || echo "--kernel-name kns=$2"; }

for tool in $TOOLS; do
  echo "== $tool: attention, every variant"
  for meta in kernels/attn_fwd_fp16_*.json kernels/attn_fwd_bf16_*.json \
              kernels/attn_bwd_fp16_d*.json kernels/attn_bwd_bf16_d*.json; do
    name=$(basename "$meta" .json)
    IFS=_ read -r _ mode dtype dim mask softcap <<< "$name"
    # Windows, softcap, ALiBi, dropout and deterministic: tile-run has no
    # such problems (from PyTorch below); the _n4096 forwards it runs.
    [ "$mask" != local ] && [[ -z $softcap || $softcap = n4096 ]] || continue
    flags=(--mode "$mode" --dtype "${dtype/fp16/f16}" --head-dim "${dim#d}" --seq 100
           --batch 1 --heads 2 --backend "$BACKEND" --kernel "$name" --check)
    [ "$mask" = noncausal ] || flags+=(--causal)
    sanitized "$tool" "$name" "$RUN" attention "${flags[@]}"
  done
  echo "== $tool: softmax, the puzzle, the GEMMs"
  for args in "--variant 1 --rows 17 --cols 100" "--variant 1 --rows 3 --cols 1000" \
              "--variant 1 --rows 2 --cols 5000" "--variant 2 --rows 5 --cols 3000" \
              "--variant 3 --rows 9 --cols 1025" "--variant 4 --rows 33 --cols 257"; do
    # shellcheck disable=SC2086  # the arguments are words
    sanitized "$tool" "softmax $args" "$RUN" softmax $args --backend "$BACKEND" --check
  done
  sanitized "$tool" "flash-puzzle" "$RUN" flash-puzzle --seq 100 --backend "$BACKEND" --check
  for t in fp16 bf16; do
    sanitized "$tool" "matmul_$t 100x72x40" "$RUN" run "matmul_$t" A=rand:100x48 \
      B=rand:40x80 C=full:nan:100x80 M=100 N=72 K=40 stride_am=48 stride_bk=80 \
      stride_cm=80 --backend "$BACKEND"
  done
  echo "== $tool: decoding, the fp8 forward, the scaled GEMM (from PyTorch)"
  if python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    # The whole file but the 16k cache and the graph replay (the same
    # kernels): initcheck did not get through it all in a 10-minute call
    # (H200, 2026-11-28).
    # shellcheck disable=SC2046  # ours gives two words or none
    sanitized "$tool" "decoding" $(ours "$tool" attn_) python3 -m pytest -q -m gpu \
      -p no:cacheprovider -k "not long_cache and not cuda_graph" \
      "$ROOT/test/python/test_attention_kvcache_gpu.py"
    # The new tokens' append (its own name, so a filter of its own).
    # shellcheck disable=SC2046
    sanitized "$tool" "decoding's append" $(ours "$tool" kv_append) python3 -m pytest -q \
      -m gpu -p no:cacheprovider -k "one_token or paged or chunk" \
      "$ROOT/test/python/test_attention_kvcache_gpu.py"
    # shellcheck disable=SC2046
    sanitized "$tool" "windows, softcap, ALiBi, dropout, deterministic" $(ours "$tool" attn_) \
      python3 "$GPU_TESTS/run_attention_variants.py"
    # shellcheck disable=SC2046
    sanitized "$tool" "fp8 attention" $(ours "$tool" attn_) \
      python3 "$GPU_TESTS/check_fp8_attention.py" kernels
    # shellcheck disable=SC2046
    sanitized "$tool" "scaled matmul" $(ours "$tool" matmul_) \
      python3 "$GPU_TESTS/check_scaled_matmul.py" kernels
  else
    record "PyTorch-launched kernels $tool" skip "PyTorch with CUDA is needed"
  fi
done
echo "sanitize ($TOOLS): $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
