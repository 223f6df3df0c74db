#!/usr/bin/env python3
"""compute-sanitizer initcheck over one decoding call, three ways, to tell
which int32 read it takes as never written (docs/hardening.md, "Sanitizers":
it was the kernel-name filter; unfiltered, each way reports no error):

  A  as test_one_token_against_a_contiguous_cache: one sequence of 4000
     tokens, one appended, cache_seqlens a CUDA tensor (KV_LENS computed
     on the stream as cache_seqlens + 1; the block table the kept
     identity rows);
  B  cache_seqlens an int (KV_LENS from torch.full);
  C  as A, with the block table given (cache_batch_idx made on the spot).

Run from a GPU bundle: python3 decode_initcheck.py (each variant under
the tool in a process of its own; prints its error summary), or
python3 decode_initcheck.py A|B|C (one call, no tool).
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def call(variant):
    import torch
    sys.path.insert(0, os.path.join(HERE, "python"))
    from tile.attention import flash_attn_with_kvcache

    generator = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=generator).to(torch.bfloat16).cuda()

    q = randn(1, 1, 32, 128)
    k_cache, v_cache = randn(1, 4008, 8, 128), randn(1, 4008, 8, 128)
    k, v = randn(1, 1, 8, 128), randn(1, 1, 8, 128)
    lens = 4000 if variant == "B" else torch.tensor([4000], dtype=torch.int32).cuda()
    extra = {}
    if variant == "C":
        extra["cache_batch_idx"] = torch.zeros(1, dtype=torch.int32).cuda()
    out = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, **extra)
    torch.cuda.synchronize()
    print(f"{variant}: out sum {out.float().abs().sum().item():.4f}")


def main():
    if len(sys.argv) > 1:
        return call(sys.argv[1])
    for variant in "ABC":
        run = subprocess.run(["compute-sanitizer", "--tool", "initcheck", "--print-limit", "2",
                              sys.executable, os.path.abspath(__file__), variant],
                             capture_output=True, text=True, timeout=300)
        lines = (run.stdout + run.stderr).splitlines()
        summary = [line for line in lines if "ERROR SUMMARY" in line or "out sum" in line]
        where = [line.strip() for line in lines if "Uninitialized" in line or " at " in line]
        print(variant, *summary, *where[:4], sep="\n  ")


if __name__ == "__main__":
    main()
