#!/usr/bin/env python3
"""How long Tile takes to compile its kernels, stage by stage, and Triton's
compile of the same attention forward beside it where Triton is installed.

    python3 benchmarks/compile_speed.py [--repeats 3] [--out FILE.json]

Run after ./dev.sh build, on an otherwise idle machine (the numbers are
wall-clock times; a parallel build doubles them). Prints, for the d128
causal attention forward and backward: the whole cold compile from Python
source to cubin in a fresh process (`python3 -m tile.compile`, cache off),
the frontend's share, and tile-compile's stages (parse, lowering, LLVM O3,
PTX, ptxas) from its --timing; then the whole shipped build (every variant,
one tile-compile run, cache off), a rebuild of an unchanged kernel (a cache
hit), and Triton's cold compile (a fresh cache) of the forward kernel
written for Tile, with its imports changed to Triton's, for sm_90 (Triton
3.6, say, in a Python of its own: --triton-python). Medians of --repeats
runs.
"""

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.environ.get("TILE_BUILD_DIR") or os.path.join(REPO, "build")
TILE_COMPILE = os.path.join(BUILD, "bin", "tile-compile")
KERNELS = ("attn_fwd_fp16_d128_causal", "attn_bwd_fp16_d128_causal")


def environment(**extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"),
               TILE_COMPILE=TILE_COMPILE, PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def timed(command, **env):
    """Seconds a command takes (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=environment(**env))
    return time.perf_counter() - start


def tile_cold(name, out_dir):
    """A fresh process compiling one shipped variant from source to cubin."""
    return timed([sys.executable, "-m", "tile.compile", "--manifest", "--only", name,
                  "--out-dir", out_dir], TILE_CACHE_DIR="off")


def frontend_seconds(name):
    """The frontend alone, in this process (imports done)."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    from tile.compiler import compile_kernel
    from tile.kernels import manifest
    variant = manifest.BY_NAME[name]
    fn = getattr(importlib.import_module(variant.module), variant.kernel)
    start = time.perf_counter()
    compile_kernel(fn, variant.signature, variant.constexprs, options=variant.options,
                   entry=variant.name, metadata=variant.metadata())
    return time.perf_counter() - start


def tile_compile_stages(module):
    """tile-compile's own stage times (ms) for one module, and its wall time."""
    start = time.perf_counter()
    result = subprocess.run([TILE_COMPILE, module, "--timing", "--out-dir",
                             tempfile.mkdtemp()], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    stages = json.loads(result.stdout.strip().splitlines()[-1])
    stages.pop("kernel")
    return stages, wall


def whole_build(out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    return timed([sys.executable, "-m", "tile.compile", "--manifest", "--out-dir", out_dir],
                 TILE_CACHE_DIR="off")


def cache_hit(name, out_dir, cache):
    tile_cold_env = {"TILE_CACHE_DIR": cache}
    command = [sys.executable, "-m", "tile.compile", "--manifest", "--only", name,
               "--out-dir", out_dir]
    timed(command, **tile_cold_env)            # fills the cache
    return timed(command, **tile_cold_env)     # the hit


TRITON_SCRIPT = r"""
import importlib.util, re, sys, time
source = open(sys.argv[1]).read()
# The kernel written for Tile, with Triton's imports and decorator.
source = re.sub(r"^import tile\.language as tl$", "import triton.language as tl", source,
                flags=re.M)
source = re.sub(r"^import tile$", "import triton", source, flags=re.M)
def plain_decorators(text):
    # @tile.jit(launch=...) -> @triton.jit: Triton takes no launch spec.
    out, start = [], 0
    while (found := text.find("@tile.jit(", start)) >= 0:
        depth, end = 0, found + len("@tile.jit")
        while True:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
            if depth == 0:
                break
        out += [text[start:found], "@triton.jit"]
        start = end
    return "".join(out) + text[start:]
source = plain_decorators(source).replace("@tile.jit", "@triton.jit")
open(sys.argv[2], "w").write(source)
spec = importlib.util.spec_from_file_location("attention_for_triton", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
fn = module.attn_fwd
signature = {name: kind for name, kind in zip(
    ["Q", "K", "V", "O", "LSE", "sm_scale", "stride_z", "stride_h", "stride_n",
     "stride_kz", "stride_kh", "stride_kn", "Z", "H", "H_KV", "N_CTX", "N_KV",
     "causal_offset", "window_offset", "softcap", "CU_SEQLENS_Q", "CU_SEQLENS_K",
     "MAX_N_CTX", "VARLEN"],
    ["*fp16"] * 4 + ["*fp32", "fp32"] + ["i32"] * 13 + ["fp32", "*i32", "*i32", "i32", "i32"])}
constexprs = {"HEAD_DIM": 128, "BLOCK_M": 256, "BLOCK_N": 64, "CAUSAL": True,
              "HEAD_GROUP": 8}
signature.update({name: "constexpr" for name in constexprs})
start = time.perf_counter()
triton.compile(ASTSource(fn, signature, constexprs),
               target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
print(time.perf_counter() - start)
"""


def triton_cold(python):
    """Triton's compile of the Tile forward in a fresh process of `python`
    and a fresh cache, or the reason it could not run."""
    probe = subprocess.run([python, "-c", "import triton; print(triton.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"Triton is not installed for {python} (--triton-python)"
    work = tempfile.mkdtemp()
    script = os.path.join(work, "compile.py")
    with open(script, "w") as f:
        f.write(TRITON_SCRIPT)
    start = time.perf_counter()
    result = subprocess.run(
        [python, script, os.path.join(REPO, "python", "tile", "kernels",
                                              "attention.py"),
         os.path.join(work, "attention_for_triton.py")],
        capture_output=True, text=True, env=dict(environment(),
                                                 TRITON_CACHE_DIR=os.path.join(work, "cache")))
    wall = time.perf_counter() - start
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"Triton could not compile the kernel: {last}"
    return {"version": probe.stdout.strip(), "wall": wall,
            "in_process": float(result.stdout.strip().splitlines()[-1])}, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="write the numbers as JSON here")
    parser.add_argument("--triton-python", default=sys.executable,
                        help="a Python with Triton (one that still has block pointers, "
                        "3.6 say: 3.9 removed them) to time it with")
    args = parser.parse_args()
    if not os.access(TILE_COMPILE, os.X_OK):
        sys.exit(f"compile_speed: {TILE_COMPILE} is not built (./dev.sh build)")
    work = tempfile.mkdtemp()
    report = {"kernels": {}}
    for name in KERNELS:
        out = os.path.join(work, name)
        cold = statistics.median(tile_cold(name, out) for _ in range(args.repeats))
        frontend = statistics.median(frontend_seconds(name) for _ in range(args.repeats))
        runs = [tile_compile_stages(os.path.join(out, name + ".mlir"))
                for _ in range(args.repeats)]
        stages = {k: statistics.median(r[0][k] for r in runs) for k in runs[0][0]}
        tool_wall = statistics.median(r[1] for r in runs)
        report["kernels"][name] = {"cold_s": cold, "frontend_s": frontend,
                                   "tile_compile_s": tool_wall, "stages_ms": stages}
    report["whole_build_s"] = statistics.median(
        whole_build(os.path.join(work, "all")) for _ in range(max(1, args.repeats // 2)))
    report["cache_hit_s"] = cache_hit(KERNELS[0], os.path.join(work, "hit"),
                                      os.path.join(work, "cache"))
    triton, why = triton_cold(args.triton_python)
    report["triton_fwd"] = triton if triton else why

    print("== Tile, source to cubin (seconds; medians of", args.repeats, "runs)")
    for name, r in report["kernels"].items():
        stages = ", ".join(f"{k} {v / 1e3:.2f}" for k, v in r["stages_ms"].items())
        print(f"{name}: cold process {r['cold_s']:.2f} = frontend {r['frontend_s']:.2f} + "
              f"tile-compile {r['tile_compile_s']:.2f} ({stages}) + Python's start")
    print(f"every shipped kernel, one build, cache off: {report['whole_build_s']:.1f}")
    print(f"a rebuild of {KERNELS[0]} from the cache (a fresh process): "
          f"{report['cache_hit_s']:.2f}")
    if triton:
        ratio = report["kernels"][KERNELS[0]]["cold_s"] / triton["wall"]
        print(f"Triton {triton['version']}, the same forward, cold (a fresh process and "
              f"cache): "
              f"{triton['wall']:.2f} (compile() {triton['in_process']:.2f}); "
              f"Tile / Triton {ratio:.2f}")
    else:
        print(f"Triton: n/a ({why})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
