#!/usr/bin/env python3
"""Compiles the kernels of a bundle directory for the GPU.

For every <name>.json + <name>.mlir in the directory, runs
`tile-opt -tile-to-llvm` (with the kernel's num_warps, num_stages,
thread_index_per_op and max_row_span; --num-stages and --max-row-span
override them for sweeps) and `tile-translate` to write <name>.ptx and, where
ptxas is found, <name>.cubin, and records them in the metadata under "gpu".
A kernel the GPU lowering reports as "not supported on the GPU yet" (an f32
tile.dot, say) keeps no "gpu" entry and is listed, not failed: the runner
says so when asked to launch it on the GPU.
Any other failure stops the build.
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


UNSUPPORTED = "not supported on the GPU yet"


class Unsupported(Exception):
    """The GPU lowering does not take this kernel yet."""


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        reason = next((line for line in result.stderr.splitlines()
                       if UNSUPPORTED in line), None)
        if reason:
            raise Unsupported(reason.split("error: ", 1)[-1])
        sys.exit(f"build_gpu_bundle: {' '.join(command)} failed:\n"
                 f"{result.stderr}")
    return result


def compile_kernel(directory, name, meta, tools, target, ptxas, num_stages=None,
                   max_row_span=None):
    stem = os.path.join(directory, name)
    llvm = stem + ".llvm.mlir"
    if num_stages is not None:
        meta["num_stages"] = num_stages
    if max_row_span is not None:
        meta["max_row_span"] = max_row_span
    stages = meta.get("num_stages", 2)
    per_op = "true" if meta.get("thread_index_per_op", False) else "false"
    span = meta.get("max_row_span", 0)
    run([tools["tile-opt"], stem + ".mlir",
         f"-tile-to-llvm=num-warps={meta['num_warps']} target={target} "
         f"num-stages={stages} thread-index-per-op={per_op} max-row-span={span}",
         "-o", llvm])
    run([tools["tile-translate"], llvm, "--emit=ptx",
         "-o", stem + ".ptx"])
    with open(llvm) as f:
        shared = re.search(r"tilegpu\.shared_bytes = (\d+)", f.read())
    os.remove(llvm)
    gpu = {"target": target, "ptx": name + ".ptx",
           "shared_bytes": int(shared.group(1)) if shared else 0}
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
    parser.add_argument("--num-stages", type=int,
                        help="override every kernel's num_stages (for sweeps)")
    parser.add_argument("--max-row-span", type=int,
                        help="override every kernel's max_row_span "
                             "(for sweeps; bytes, 0: no limit)")
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
        meta.pop("gpu", None)
        try:
            meta["gpu"] = compile_kernel(args.directory, name, meta, tools,
                                         args.target, ptxas, args.num_stages,
                                         args.max_row_span)
            compiled.append(name)
        except Unsupported as reason:
            waiting.append(f"{name} ({reason})")
        with open(path, "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
    print(f"build_gpu_bundle: {len(compiled)} kernels compiled for "
          f"{args.target} ({'PTX and cubin' if ptxas else 'PTX only: no ptxas'})")
    if waiting:
        print(f"build_gpu_bundle: {len(waiting)} kernels are not supported on "
              f"the GPU yet: {'; '.join(waiting)}")
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write("\n".join(compiled) + "\n")


if __name__ == "__main__":
    main()
