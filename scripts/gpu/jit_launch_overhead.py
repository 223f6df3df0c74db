"""The host cost of kernel[grid](...) calls, against the GPU time they buy.

Tutorial 02's softmax (examples/pytorch_launch.py, 4096 x 8192 fp32, 528
programs: a kernel of about 72 us on an H200) launched from PyTorch by Tile
and by Triton, from the same source. For each: the host microseconds a call
takes with calls made back to back, then with the GPU's time (when the host
is the slower, the GPU waits); for Tile also the two halves of the whole
way, which a call takes the first time, and an autotuner's calls each time
(prepare: binding, specialisation, grid, cache lookup; launch: packing the
arguments and cuLaunchKernel), and where the calls spend their time, under
cProfile (a call after the first: tile/launcher.py's run and _FastLaunch).

    python3 jit_launch_overhead.py

Run from a GPU bundle whose tt/ holds Tile's tutorial kernels
(benchmarks/triton_tutorials_bench.py --prepare --kernels tt --cases
softmax, where tile-compile is). Under Nsight Compute (ncu -k
regex:softmax_kernel), the same calls give both kernels' own times.
"""

import cProfile
import os
import pstats
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "benchmarks"), os.path.join(HERE, "python")]
os.environ.setdefault("TILE_CACHE_DIR", os.path.join(HERE, "tt"))
import triton_tutorials_bench as bench  # noqa: E402

CALLS = 200


def per_call(run):
    """Host microseconds a call, then with the GPU's time."""
    start = time.perf_counter()
    for _ in range(CALLS):
        run()
    host = time.perf_counter() - start
    torch.cuda.synchronize()
    return host / CALLS * 1e6, (time.perf_counter() - start) / CALLS * 1e6


def time_tile_halves(module, x):
    """Tile's prepare and launch apart, microseconds a call, and its calls
    under cProfile."""
    from tile import launcher
    y = torch.empty_like(x)
    args = (y, x, x.stride(0), y.stride(0), *x.shape)
    meta = dict(BLOCK_SIZE=8192, NUM_STAGES=1, num_warps=4)
    kernel = module.softmax_kernel
    prepared = launcher.prepare(kernel, (528,), args, meta)
    prepare = per_call(lambda: launcher.prepare(kernel, (528,), args, meta))[0]
    print(f"  prepare {prepare:.1f} us, launch {per_call(prepared.launch)[0]:.1f} us")
    profile = cProfile.Profile()
    profile.runcall(lambda: [module.softmax(x, programs=528) for _ in range(CALLS)])
    torch.cuda.synchronize()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(18)


def main():
    x = torch.randn(4096, 8192, device="cuda")
    for impl in ("tile", "triton"):
        module = bench.load_example("pytorch_launch.py", impl)

        def call(module=module):
            module.softmax(x, programs=528)
        for _ in range(20):
            call()
        torch.cuda.synchronize()
        host, total = per_call(call)
        print(f"{impl}: host {host:.1f} us a call, with the GPU {total:.1f} us")
        if impl == "tile":
            time_tile_halves(module, x)


if __name__ == "__main__":
    main()
