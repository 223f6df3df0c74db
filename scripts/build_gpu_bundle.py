#!/usr/bin/env python3
"""Compiles the kernels of a bundle directory for the GPU.

For every <name>.json + <name>.mlir in the directory, runs
`tile-opt -tile-to-llvm` (with the kernel's num_warps) and `tile-translate`
to write <name>.ptx and, where ptxas is found, <name>.cubin, and records them
in the metadata under "gpu". Kernels the GPU lowering cannot take yet (those
with tile.dot) keep no "gpu" entry and are listed, not failed: the runner
says so when asked to launch one. Any other failure stops the build.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys


def find_ptxas():
    return shutil.which("ptxas") or (
        "/usr/local/cuda/bin/ptxas"
        if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"build_gpu_bundle: {' '.join(command)} failed:\n"
                 f"{result.stderr}")
    return result


def compile_kernel(directory, name, meta, tools, target, ptxas):
    stem = os.path.join(directory, name)
    llvm = stem + ".llvm.mlir"
    run([tools["tile-opt"], stem + ".mlir",
         f"-tile-to-llvm=num-warps={meta['num_warps']} target={target}",
         "-o", llvm])
    run([tools["tile-translate"], llvm, "--emit=ptx", f"--target={target}",
         "-o", stem + ".ptx"])
    with open(llvm) as f:
        scratch = re.search(r"@tile_shared_scratch\(\).*!llvm\.array<(\d+) x i8>",
                            f.read())
    os.remove(llvm)
    gpu = {"target": target, "ptx": name + ".ptx",
           "shared_bytes": int(scratch.group(1)) if scratch else 0}
    if ptxas:
        run([ptxas, f"-arch={target}", "-o", stem + ".cubin", stem + ".ptx"])
        gpu["cubin"] = name + ".cubin"
    return gpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--tools", required=True,
                        help="directory holding tile-opt and tile-translate")
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--stamp", help="file to touch when done")
    args = parser.parse_args()

    tools = {t: os.path.join(args.tools, t)
             for t in ("tile-opt", "tile-translate")}
    ptxas = find_ptxas()
    compiled, waiting = [], []
    for entry in sorted(os.listdir(args.directory)):
        if not entry.endswith(".json"):
            continue
        name = entry[:-len(".json")]
        path = os.path.join(args.directory, entry)
        with open(path) as f:
            meta = json.load(f)
        with open(os.path.join(args.directory, name + ".mlir")) as f:
            needs_tensor_cores = "tile.dot" in f.read()
        meta.pop("gpu", None)
        if needs_tensor_cores:
            waiting.append(name)
        else:
            meta["gpu"] = compile_kernel(args.directory, name, meta, tools,
                                         args.target, ptxas)
            compiled.append(name)
        with open(path, "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
    print(f"build_gpu_bundle: {len(compiled)} kernels compiled for "
          f"{args.target} ({'PTX and cubin' if ptxas else 'PTX only: no ptxas'})")
    if waiting:
        print(f"build_gpu_bundle: {len(waiting)} kernels use tile.dot and wait "
              f"for the tensor-core lowering: {', '.join(waiting)}")
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write("\n".join(compiled) + "\n")


if __name__ == "__main__":
    main()
