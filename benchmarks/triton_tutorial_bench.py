#!/usr/bin/env python3
"""Triton's tutorial matmul compiled by Tile and by Triton from one source,
beside cuBLAS, in one run on one GPU.

  tile    examples/pytorch_launch.py's matmul_kernel (tutorial 03, pointers
          advanced each K step, masked loads) through tile.jit,
          kernel[grid](...)
  triton  the same file with its two imports changed to Triton's
          (`import triton as tile`, `import triton.language as tl`)
  cublas  torch.matmul

fp16 in and out, fp32 accumulation, row-major, at 4096^3 and 8192^3 (both
multiples of every block: the loads are 16-byte vectors that Tile copies
ahead with cp.async), for each block configuration of --configs
(BLOCK_M x BLOCK_N x BLOCK_K / warps / stages). CUDA events, warm-up, the
median of many calls, two passes in alternating order; FLOPs 2*M*N*K.
Before timing, each output (written over NaNs) is compared with the
float32 product rounded to fp16 (the max error over the max magnitude).

The GPU machine has no tile-compile: compile Tile's kernels where it is,

    python3 benchmarks/triton_tutorial_bench.py --prepare --kernels DIR

(meta tensors, nothing launched), and time on the GPU with the same
--kernels (it becomes $TILE_CACHE_DIR).

    python3 benchmarks/triton_tutorial_bench.py [--kernels DIR]
        [--shapes 4096,8192] [--configs 128x128x64/8/3,128x256x64/8/3]
        [--impl tile,triton,cublas]
"""

import argparse
import functools
import os
import statistics
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402

IMPLEMENTATIONS = ("tile", "triton", "cublas")
SOURCE = os.path.join(ROOT, "examples", "pytorch_launch.py")
TILE_IMPORTS = "import tile\nimport tile.language as tl\n"


def load_example(imports):
    """examples/pytorch_launch.py as a module, its imports replaced by
    `imports`."""
    with open(SOURCE) as f:
        text = f.read()
    if TILE_IMPORTS not in text:
        sys.exit(f"triton_tutorial_bench: {SOURCE} no longer starts with Tile's two imports")
    module = types.ModuleType("pytorch_launch_" + imports.split()[1])
    module.__file__ = SOURCE
    exec(compile(text.replace(TILE_IMPORTS, imports), SOURCE, "exec"), module.__dict__)
    return module


def parse_config(text):
    blocks, warps, stages = text.split("/")
    block_m, block_n, block_k = (int(x) for x in blocks.split("x"))
    return block_m, block_n, block_k, int(warps), int(stages)


def launcher(module, config):
    """run(a, b, c): c = a @ b by the module's matmul_kernel."""
    block_m, block_n, block_k, warps, stages = config

    def run(a, b, c):
        (m, k), n = a.shape, b.shape[1]
        grid = ((m + block_m - 1) // block_m, (n + block_n - 1) // block_n)
        module.matmul_kernel[grid](
            a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n,
            BLOCK_SIZE_K=block_k, num_warps=warps, num_stages=stages)
    return run


def median_ms(run, target_ms=200.0):
    run()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        run()
    stop.record()
    stop.synchronize()
    estimate = max(start.elapsed_time(stop) / 3, 1e-3)
    for _ in range(max(2, int(25 / estimate))):
        run()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(max(5, min(200, int(target_ms / estimate))))]
    for begin, end in events:
        begin.record()
        run()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) for b, e in events)


def prepare(shapes, configs):
    """Compiles Tile's specialisations of every shape and config ($TILE_CACHE_DIR)."""
    from tile import launcher as tile_launcher
    module = load_example(TILE_IMPORTS)
    real_run = tile_launcher.run
    tile_launcher.run = lambda fn, grid, args, kwargs: tile_launcher.warmup(fn, args, kwargs,
                                                                            grid)
    try:
        for size in shapes:
            a = torch.empty(size, size, device="meta", dtype=torch.float16)
            for config in configs:
                launcher(module, config)(a, a, a)
                print(f"compiled: {size}^3 {config}")
    finally:
        tile_launcher.run = real_run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="4096,8192")
    parser.add_argument("--configs", default="128x128x64/8/3,128x256x64/8/3")
    parser.add_argument("--impl", default=",".join(IMPLEMENTATIONS))
    parser.add_argument("--kernels", help="Tile's compiled kernels ($TILE_CACHE_DIR)")
    parser.add_argument("--prepare", action="store_true",
                        help="compile Tile's kernels into --kernels; launch nothing")
    args = parser.parse_args()
    shapes = [int(x) for x in args.shapes.split(",")]
    configs = [parse_config(x) for x in args.configs.split(",")]
    names = args.impl.split(",")
    if set(names) - set(IMPLEMENTATIONS):
        parser.error(f"--impl takes {', '.join(IMPLEMENTATIONS)}")
    if args.kernels:
        os.environ["TILE_CACHE_DIR"] = os.path.abspath(args.kernels)
    if args.prepare:
        prepare(shapes, configs)
        return
    if not torch.cuda.is_available():
        sys.exit("triton_tutorial_bench: needs a CUDA GPU")
    modules = {}
    if "tile" in names:
        modules["tile"] = load_example(TILE_IMPORTS)
    if "triton" in names:
        modules["triton"] = load_example("import triton as tile\nimport triton.language as tl\n")
    rows = []
    for size in shapes:
        generator = torch.Generator(device="cuda").manual_seed(size)
        a, b = (torch.randn(size, size, generator=generator, device="cuda",
                            dtype=torch.float16) for _ in range(2))
        expected = (a.float() @ b.float()).half().float()
        flops = 2 * size ** 3
        runs = [("cublas", "-", lambda a, b, c: torch.matmul(a, b, out=c))] \
            if "cublas" in names else []
        for config in configs:
            label = "{}x{}x{}/{}/{}".format(*config)
            runs += [(name, label, launcher(modules[name], config))
                     for name in names if name != "cublas"]
        times = {}
        for index in range(2):   # two passes, the second in reverse order
            for name, label, run in (runs if index == 0 else list(reversed(runs))):
                c = torch.full_like(a, float("nan"))
                try:
                    if index == 0:
                        run(a, b, c)
                        error = ((c.float() - expected).abs().max()
                                 / expected.abs().max()).item()
                        times[name, label] = ([], error)
                    if times.get((name, label)) is None:
                        continue
                    timed = functools.partial(run, a, b, c)
                    times[name, label][0].append(median_ms(timed))
                except Exception as failure:  # noqa: BLE001 - recorded, the run goes on
                    times[name, label] = None
                    print(f"{name} {label} {size}: {str(failure).splitlines()[0][:100]}")
        for (name, label), result in times.items():
            if result is None:
                rows.append((size, name, label, "n/a", ""))
                continue
            passes, error = result
            ms = statistics.mean(passes)
            rows.append((size, name, label, f"{flops / ms / 1e9:.0f}", f"{error:.1e}"))
    print(f"\nTFLOP/s, fp16, M = N = K ({torch.cuda.get_device_name()})")
    print(f"{'size':>6}  {'impl':<8}{'config':<18}{'TFLOP/s':>8}  max rel. error")
    for size, name, label, tflops, error in rows:
        print(f"{size:>6}  {name:<8}{label:<18}{tflops:>8}  {error}")


if __name__ == "__main__":
    main()
