#!/usr/bin/env python3
"""Decoding speed: one new query token against a KV cache, as inference
runs it (issue #37's shapes: bf16, 32 query heads, 8 K/V heads, D = 128).

Decoding is bound by memory: each row reports the bytes of K and V read
(batch x cache length x K/V heads x D x 2 tensors x 2 bytes) divided by
the time, in TB/s, for Tile's flash_attn_with_kvcache (contiguous cache,
its split heuristic), for SDPA (enable_gqa=True, each of its flash,
cuDNN and efficient backends that takes the shape) and, where installed,
FlashAttention-4's flash_attn_func (flash_attn.cute, one query a sequence
against the whole cache: what SDPA is given too), beside the device's
copy bandwidth measured in the same run (a large device-to-device copy,
counting bytes read and written).  CUDA events, warm-up, the median of many
calls; prints one table.  Each call is timed as the caller sees it, so at
small batches the host's work per call (Python, launches) can set the time;
with --cuda-graph each call is captured once in a CUDA graph and its replays
are timed, as inference servers run decoding: the GPU's time alone.

    python3 benchmarks/decode_bench.py [--batch 1,8,64] [--cache 4096,16384,131072]
        [--heads 32] [--heads-k 8] [--head-dim 128] [--target-ms 100] [--cuda-graph]
        [--num-splits 0]
"""

import argparse
import os
import statistics
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from attention_bench import captured  # noqa: E402
from tile.attention import flash_attn_with_kvcache  # noqa: E402

SDPA_BACKENDS = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
                 "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
                 "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}
# Caches past this many bytes of K and V are skipped (the GPU's memory).
MAX_CACHE_BYTES = 40 << 30


def median_ms(run, target_ms):
    """Median time of run() by CUDA events, after a warm-up."""
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        run()
    stop.record()
    stop.synchronize()
    reps = max(5, min(500, int(target_ms / max(start.elapsed_time(stop) / 3, 1e-3))))
    times = []
    for _ in range(reps):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def copy_bandwidth(target_ms):
    """TB/s of a 2 GiB device-to-device copy, bytes read plus written."""
    src = torch.empty(1 << 31, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), target_ms)
    return 2 * src.numel() / ms / 1e9


def time_shape(batch, cache, args):
    """{implementation: TB/s of K/V read} for one (batch, cache length)."""
    dtype = torch.bfloat16
    q = torch.randn(batch, 1, args.heads, args.head_dim, device="cuda", dtype=dtype)
    k = torch.randn(batch, cache, args.heads_k, args.head_dim, device="cuda", dtype=dtype)
    v = torch.randn_like(k)
    lengths = torch.full((batch,), cache, dtype=torch.int32, device="cuda")
    kv_bytes = 2 * k.numel() * k.element_size()
    timed = captured if args.cuda_graph else (lambda run: run)
    results = {}
    results["tile"] = median_ms(
        timed(lambda: flash_attn_with_kvcache(q, k, v, cache_seqlens=lengths,
                                              num_splits=args.num_splits)), args.target_ms)
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    for name, backend in SDPA_BACKENDS.items():
        def sdpa(backend=backend):
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        try:
            sdpa()
        except RuntimeError:
            continue                    # the backend does not take this shape
        results[name] = median_ms(timed(sdpa), args.target_ms)
    if fa4_available():
        from flash_attn.cute import flash_attn_func as fa4_func
        try:
            fa4_func(q, k, v)
            results["fa4"] = median_ms(timed(lambda: fa4_func(q, k, v)), args.target_ms)
        except Exception as error:  # noqa: BLE001 - a shape FA4 declines
            print(f"fa4 at batch {batch}, cache {cache}: {str(error).splitlines()[0][:80]}")
    return {name: kv_bytes / ms / 1e9 for name, ms in results.items()}


def fa4_available():
    try:
        import flash_attn.cute  # noqa: F401
    except ImportError:
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", default="1,8,64")
    parser.add_argument("--cache", default="4096,16384,131072")
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--heads-k", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--target-ms", type=float, default=100.0)
    parser.add_argument("--cuda-graph", action="store_true",
                        help="time each call's CUDA-graph replay (the GPU's time alone)")
    parser.add_argument("--num-splits", type=int, default=0,
                        help="Tile's num_splits (0: its heuristic)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("decode_bench: no CUDA device")
    # SDPA explains at each call why a backend declines a shape.
    warnings.filterwarnings("ignore", category=UserWarning)
    print(f"{torch.cuda.get_device_name()}: copy {copy_bandwidth(args.target_ms):.2f} TB/s "
          f"(read + written); {'CUDA-graph replays' if args.cuda_graph else 'eager calls'}")
    names = ["tile", *SDPA_BACKENDS] + (["fa4"] if fa4_available() else [])
    print(f"{'batch':>5} {'cache':>7} | " + " ".join(f"{n:>14}" for n in names)
          + " | tile/best peer")
    for batch in map(int, args.batch.split(",")):
        for cache in map(int, args.cache.split(",")):
            if 2 * batch * cache * args.heads_k * args.head_dim * 2 > MAX_CACHE_BYTES:
                continue
            tbs = time_shape(batch, cache, args)
            best = max((v for n, v in tbs.items() if n != "tile"), default=float("nan"))
            print(f"{batch:>5} {cache:>7} | "
                  + " ".join(f"{tbs[n]:>14.2f}" if n in tbs else f"{'-':>14}" for n in names)
                  + f" | {tbs['tile'] / best:.2f}")


if __name__ == "__main__":
    main()
