"""The host time of an eager decoding step: flash_attn_with_kvcache with
one new token appended to the cache (issue #37's shape: bf16, 32 query
and 8 K/V heads, D = 128), as a generation loop calls it.

    python3 decode_step_overhead.py [PYTHON_DIR] [--batch 1] [--cache 4096]

PYTHON_DIR holds the `tile` package to time (default: the bundle's
`python`; an older one unpacked beside it with `git archive REV
python/tile | tar -x`). Prints one line: the wall microseconds a step
takes with steps made back to back (the caller's view: host-bound at small
batches), and the GPU microseconds of the same step captured in a CUDA
graph (no host work). The host's speed drifts between processes: to
compare two copies, run them alternately, one process each.
"""

import argparse
import statistics
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("python_dir", nargs="?", default="python")
parser.add_argument("--batch", type=int, default=1)
parser.add_argument("--cache", type=int, default=4096)
parser.add_argument("--steps", type=int, default=2000)
args = parser.parse_args()
sys.path.insert(0, args.python_dir)

import torch  # noqa: E402

from tile.attention import flash_attn_with_kvcache  # noqa: E402


def main():
    torch.manual_seed(0)
    batch, heads, heads_k, dim = args.batch, 32, 8, 128
    device, dtype = "cuda", torch.bfloat16
    q = torch.randn(batch, 1, heads, dim, device=device, dtype=dtype)
    k, v = (torch.randn(batch, 1, heads_k, dim, device=device, dtype=dtype) for _ in range(2))
    k_cache, v_cache = (torch.randn(batch, args.cache, heads_k, dim, device=device,
                                    dtype=dtype) for _ in range(2))
    # The same position each step: the cache's contents do not matter here.
    lengths = torch.full((batch,), args.cache - 100, dtype=torch.int32, device=device)

    def step():
        return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lengths)

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    walls = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - start) / args.steps * 1e6)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        step()
        with torch.cuda.graph(graph, stream=stream):
            step()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(args.steps):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    gpu = begin.elapsed_time(end) / args.steps * 1e3
    print(f"{args.python_dir}: batch {batch}, cache {args.cache}: "
          f"eager {statistics.median(walls):.1f} us a step, graph {gpu:.1f} us")


if __name__ == "__main__":
    main()
