#!/usr/bin/env python3
"""Triton's tutorials compiled by Tile and by Triton from one source, in
one run on one GPU.

The kernels and their launchers are examples/pytorch_launch.py's
(tutorials 01-05 and 09) and examples/fused_attention.py's (06), written
in Triton's vocabulary and launched with kernel[grid](...):

  tile    through tile.jit
  triton  the same files with their two imports changed to Triton's
          (`import triton as tile`, `import triton.language as tl`)
  torch   PyTorch's own operation, where it has one (cuBLAS, F.softmax,
          F.layer_norm), for scale

Cases (sizes that are multiples of every block, as benchmarks use):
  add          01, x + y, fp32, 2^26 elements (GB/s read + written)
  softmax      02, rows of 4096 x 8192 fp32, 528 programs, the loop on 1
               and on 2 stages (GB/s)
  matmul       03, fp16 4096^3 and 8192^3, each --configs entry
               (BLOCK_M x BLOCK_N x BLOCK_K / warps / stages) (TFLOP/s)
  dropout      04, seeded, p = 0.5, fp32, 2^26 elements (GB/s)
  layernorm    05, forward of 4096 x 8192 fp16 (GB/s); its backward
               (dX, and dW, dB summed under locks) (GB/s of dY, X, dX)
  attention    06, forward and forward + backward, fp16, causal,
               4 x 16 x 4096 x 64 (TFLOP/s, the backward x2.5)
  persistent   09, fp16 4096^3 on 132 programs (TFLOP/s)

CUDA events, warm-up, the median of many calls, two passes in
alternating order. Before timing, each output is compared with PyTorch's float32 result (the
max error over the max magnitude; the matmul writes over NaNs), and
dropout's Tile output with Triton's (the same Philox, bit for bit).

The GPU machine has no tile-compile: compile Tile's kernels where it is,

    python3 benchmarks/triton_tutorials_bench.py --prepare --kernels DIR

(meta tensors, nothing launched), and time on the GPU with the same
--kernels (it becomes $TILE_CACHE_DIR).

    python3 benchmarks/triton_tutorials_bench.py [--kernels DIR]
        [--cases add,softmax,matmul,dropout,layernorm,attention,persistent]
        [--configs 128x128x64/8/3,128x256x64/8/4] [--impl tile,triton,torch]
"""

import argparse
import os
import statistics
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from attention_bench import median_ms  # noqa: E402

IMPLEMENTATIONS = ("tile", "triton", "torch")
CASES = ("add", "softmax", "matmul", "dropout", "layernorm", "attention", "persistent")
EXAMPLES = {"launch": "pytorch_launch.py", "attention": "fused_attention.py"}
TILE_IMPORTS = "import tile\nimport tile.language as tl\n"
IMPORTS = {"tile": TILE_IMPORTS, "triton": "import triton as tile\nimport triton.language as tl\n"}
SMS = 132


def load_example(name, impl):
    """examples/<name> as a module, its imports those of `impl`."""
    path = os.path.join(ROOT, "examples", name)
    with open(path) as f:
        text = f.read()
    if TILE_IMPORTS not in text:
        sys.exit(f"triton_tutorials_bench: {path} no longer starts with Tile's two imports")
    module = types.ModuleType(f"{name[:-3]}_{impl}")
    module.__file__ = path
    exec(compile(text.replace(TILE_IMPORTS, IMPORTS[impl]), path, "exec"), module.__dict__)
    return module


def parse_config(text):
    blocks, warps, stages = text.split("/")
    block_m, block_n, block_k = (int(x) for x in blocks.split("x"))
    return block_m, block_n, block_k, int(warps), int(stages)


def tutorial_matmul(module, config):
    """run(a, b, c): c = a @ b by tutorial 03's kernel with `config`."""
    block_m, block_n, block_k, warps, stages = config

    def run(a, b, c):
        (m, k), n = a.shape, b.shape[1]
        grid = ((m + block_m - 1) // block_m, (n + block_n - 1) // block_n)
        module.matmul_kernel[grid](
            a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n,
            BLOCK_SIZE_K=block_k, num_warps=warps, num_stages=stages)
        return c
    return run


def attention_step(attention, backward):
    """run(q, k, v, do): the causal forward, and with `backward` its
    gradients too."""
    def run(q, k, v, do):
        out = attention(q, k, v, True)
        if backward:
            out.backward(do)
            return q.grad
        return out
    return run


def build_cases(names, configs, modules, device):
    """[(case, label, work, unit, inputs, {impl: run(*inputs)}, reference)]:
    work in bytes or FLOPs for `unit`, reference(*inputs) PyTorch's float32
    result (None: compare Tile with Triton)."""
    def randn(*shape, dtype=torch.float32, grad=False):
        return torch.randn(*shape, device=device, dtype=dtype, requires_grad=grad)

    launch = {impl: m["launch"] for impl, m in modules.items()}
    out = []
    if "add" in names:
        n = 1 << 26
        runs = {impl: m.add for impl, m in launch.items()}
        runs["torch"] = torch.add
        out.append(("add", "fp32 2^26", 12 * n, "GB/s", (randn(n), randn(n)), runs,
                    lambda x, y: x + y))
    if "softmax" in names:
        rows, cols = 4096, 8192
        # As the tutorial's loop, tl.range(..., num_stages=N): one stage (each
        # row loaded where it is used), and two (the next row copied ahead
        # through shared memory: 64 KiB a program at 8192 columns).
        for stages in (1, 2):
            runs = {impl: (lambda x, m=m, s=stages: m.softmax(x, programs=4 * SMS, num_stages=s))
                    for impl, m in launch.items()}
            runs["torch"] = lambda x: torch.softmax(x, 1)
            out.append(("softmax", f"fp32 {rows}x{cols}, {stages} stage{'s' * (stages > 1)}",
                        8 * rows * cols, "GB/s", (randn(rows, cols),), runs,
                        lambda x: torch.softmax(x, 1)))
    if "matmul" in names:
        for size in (4096, 8192):
            inputs = (randn(size, size, dtype=torch.float16),
                      randn(size, size, dtype=torch.float16),
                      torch.empty(size, size, device=device, dtype=torch.float16))
            for config in configs:
                runs = {impl: tutorial_matmul(m, config) for impl, m in launch.items()}
                runs["torch"] = lambda a, b, c: torch.matmul(a, b, out=c)
                label = "fp16 {}^3 {}x{}x{}/{}/{}".format(size, *config)
                out.append(("matmul", label, 2 * size ** 3, "TFLOP/s", inputs, runs,
                            lambda a, b, c: a.float() @ b.float()))
    if "dropout" in names:
        n = 1 << 26
        runs = {impl: (lambda x, m=m: m.seeded_dropout(x, 0.5, 123)) for impl, m in launch.items()}
        out.append(("dropout", "fp32 2^26", 8 * n, "GB/s", (randn(n),), runs, None))
    if "layernorm" in names:
        rows, cols = 4096, 8192
        x, w, b = (randn(rows, cols, dtype=torch.float16), randn(cols, dtype=torch.float16),
                   randn(cols, dtype=torch.float16))
        runs = {impl: (lambda x, w, b, m=m: m.layer_norm(x, w, b)[0]) for impl, m in launch.items()}
        runs["torch"] = lambda x, w, b: F.layer_norm(x, (cols,), w, b)
        out.append(("layernorm", f"fwd fp16 {rows}x{cols}", 4 * rows * cols, "GB/s", (x, w, b),
                    runs, lambda x, w, b: F.layer_norm(x.float(), (cols,), w.float(), b.float())))
        mean = x.float().mean(1)
        rstd = torch.rsqrt(x.float().var(1, unbiased=False) + 1e-5)
        dy = randn(rows, cols, dtype=torch.float16)
        runs = {impl: (lambda dy, x, w, mean, rstd, m=m: m.layer_norm_backward(
            dy, x, w, mean, rstd)[0]) for impl, m in launch.items()}

        def dx_reference(dy, x, w, mean, rstd):
            xr = x.float().requires_grad_()
            F.layer_norm(xr, (cols,), w.float(), b.float()).backward(dy.float())
            return xr.grad
        out.append(("layernorm", f"bwd fp16 {rows}x{cols}", 6 * rows * cols, "GB/s",
                    (dy, x, w, mean, rstd), runs, dx_reference))
    if "attention" in names:
        shape = (4, 16, 4096, 64)
        batch, heads, n, dim = shape
        flops = 4 * batch * heads * n * n * dim * 0.5
        q, k, v = (randn(*shape, dtype=torch.float16, grad=True) for _ in range(3))
        do = randn(*shape, dtype=torch.float16)
        for backward in (False, True):
            runs = {impl: attention_step(m["attention"].attention, backward)
                    for impl, m in modules.items()}

            def sdpa(q, k, v, do, backward=backward):
                result = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                if backward:
                    result.backward(do)
                    return q.grad
                return result
            runs["torch"] = sdpa

            def reference(q, k, v, do, backward=backward):
                qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
                result = F.scaled_dot_product_attention(qf, kf, vf, is_causal=True)
                if backward:
                    result.backward(do.float())
                    return qf.grad
                return result
            label = "fp16 causal 4x16x4096x64 " + ("fwd+bwd (dQ)" if backward else "fwd")
            out.append(("attention", label, flops * (3.5 if backward else 1.0), "TFLOP/s",
                        (q, k, v, do), runs, reference))
    if "persistent" in names:
        size = 4096
        runs = {impl: (lambda a, b, m=m: m.matmul_persistent(a, b, num_sms=SMS))
                for impl, m in launch.items()}
        runs["torch"] = torch.matmul
        out.append(("persistent", f"fp16 {size}^3, {SMS} programs", 2 * size ** 3, "TFLOP/s",
                    (randn(size, size, dtype=torch.float16),
                     randn(size, size, dtype=torch.float16)), runs,
                    lambda a, b: a.float() @ b.float()))
    return out


def relative_error(result, expected):
    result, expected = result.float(), expected.float()
    return ((result - expected).abs().max() / expected.abs().max()).item()


def prepare(names, configs):
    """Compiles Tile's kernels of every case ($TILE_CACHE_DIR), launching
    nothing: meta tensors through the launcher's warm-up."""
    from tile import launcher as tile_launcher
    modules = {"tile": {key: load_example(name, "tile") for key, name in EXAMPLES.items()}}
    real_run = tile_launcher.run
    tile_launcher.run = lambda fn, grid, args, kwargs: tile_launcher.warmup(fn, args, kwargs,
                                                                            grid)
    try:
        for case, label, _, _, inputs, runs, _ in build_cases(names, configs, modules, "meta"):
            runs["tile"](*inputs)
            print(f"compiled: {case} {label}")
    finally:
        tile_launcher.run = real_run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--configs", default="128x128x64/8/3,128x256x64/8/4",
                        help="tutorial 03's matmul configurations")
    parser.add_argument("--impl", default=",".join(IMPLEMENTATIONS))
    parser.add_argument("--kernels", help="Tile's compiled kernels ($TILE_CACHE_DIR)")
    parser.add_argument("--prepare", action="store_true",
                        help="compile Tile's kernels into --kernels; launch nothing")
    args = parser.parse_args()
    names, impls = args.cases.split(","), args.impl.split(",")
    if set(names) - set(CASES):
        parser.error(f"--cases takes {', '.join(CASES)}")
    if set(impls) - set(IMPLEMENTATIONS):
        parser.error(f"--impl takes {', '.join(IMPLEMENTATIONS)}")
    configs = [parse_config(x) for x in args.configs.split(",")]
    if args.kernels:
        os.environ["TILE_CACHE_DIR"] = os.path.abspath(args.kernels)
    if args.prepare:
        prepare(names, configs)
        return
    if not torch.cuda.is_available():
        sys.exit("triton_tutorials_bench: needs a CUDA GPU")
    modules = {impl: {key: load_example(name, impl) for key, name in EXAMPLES.items()}
               for impl in impls if impl != "torch"}
    rows = []
    for case, label, work, unit, inputs, runs, reference in build_cases(names, configs, modules,
                                                                        "cuda"):
        runs = {impl: run for impl, run in runs.items() if impl in impls}
        results, outputs = {}, {}
        for index in range(2):   # two passes, the second in reverse order
            for impl, run in (list(runs.items()) if index == 0 else reversed(runs.items())):
                if results.get(impl, []) is None:
                    continue
                try:
                    if index == 0:
                        # Fresh gradients; the matmul's output over NaNs.
                        for tensor in inputs:
                            tensor.grad = None
                        if case == "matmul":
                            inputs[2].fill_(float("nan"))
                        outputs[impl] = run(*inputs).clone()
                        results[impl] = []
                    results[impl].append(median_ms(lambda _, run=run, inputs=inputs: run(*inputs),
                                                   1, 200.0))
                except Exception as failure:  # noqa: BLE001 - recorded, the run goes on
                    results[impl] = None
                    print(f"{case} {label} {impl}: {str(failure).splitlines()[0][:100]}")
        expected = reference(*inputs) if reference else outputs.get("triton")
        for impl, passes in results.items():
            if passes is None:
                rows.append((case, label, impl, "n/a", ""))
                continue
            if expected is None:
                check = "-"
            elif reference is None:
                check = "equal" if torch.equal(outputs[impl], expected) else "DIFFERS"
            else:
                check = f"{relative_error(outputs[impl], expected):.1e}"
            speed = work / statistics.mean(passes) / (1e6 if unit == "GB/s" else 1e9)
            rows.append((case, label, impl, f"{speed:.0f} {unit}", check))
        torch.cuda.empty_cache()
    print(f"\nTriton's tutorials, Tile and Triton on one source ({torch.cuda.get_device_name()})")
    print(f"{'case':<11}{'shape':<34}{'impl':<8}{'speed':>13}  error")
    for case, label, impl, speed, check in rows:
        print(f"{case:<11}{label:<34}{impl:<8}{speed:>13}  {check}")


if __name__ == "__main__":
    main()
