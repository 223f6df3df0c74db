#!/usr/bin/env python3
"""GEMM speed on one GPU: Tile's matmul kernels against cuBLAS, same run.

Times C = A @ B (row-major, C in the inputs' type) for
  tile    the matmul_<dtype> variant of the kernel folder, launched in-process
          through the Tile runtime (tile.runtime), as tile-run would choose it
  cublas  torch.matmul(a, b, out=c)
in fp16 and bf16 at 4096^3, 8192^3 and one shape that is a multiple of no
block (M x N x K).  fp8 (--dtype fp8e4nv,fp8e5) times C = (A @ B) * scales
in bf16 with B column-major (stored as its [N, K] transpose), per-tensor
scales on the device:
  tile    the matmul_scaled_<dtype> variant
  cublas  torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)
Rows are padded to multiples of 16 elements (the Tile
kernels' signature promises it): both implementations get the same strided
views.  Timing as attention_bench.py: CUDA events around each call, warm-up
first, median of many, input sets rotated so that the L2 cache does not
flatter anyone, two passes in alternating order, each time the mean of its
passes' medians.  FLOPs: 2*M*N*K.  Before timing, Tile's output is compared
with the float32 product of the same inputs (normwise relative error).  An
implementation that fails is recorded as n/a and the run goes on.

Writes matmul_bench.json to --out; prints one table last, with Tile /
cuBLAS (the target of issue #34: at least 0.9 at 4096^3 and 8192^3).

    python3 benchmarks/matmul_bench.py [--dtype fp16,bf16]
        [--shapes 4096x4096x4096,8192x8192x8192,4095x4097x4099]
        [--kernels DIR] [--out DIR]

--kernels times the variants of another folder, such as one that
scripts/make_variant_folder.sh made with other block sizes.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "gpu"))

import torch  # noqa: E402

import attention_bench  # noqa: E402
import check_scaled_matmul  # noqa: E402
import tile  # noqa: E402
from attention_bench import fmt, free_memory, time_in_alternating_passes, warm_gpu  # noqa: E402
from tile import runtime  # noqa: E402
from tile.attention.bundle import find_kernel_dir  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16,
          "fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}
# The scales of the fp8 product: powers of two, so that the float32
# reference scales exactly.
FP8_SCALES = (0.5, 0.25)
SHAPES = ((4096, 4096, 4096), (8192, 8192, 8192), (4095, 4097, 4099))
IMPLEMENTATIONS = ("tile", "cublas")
ROW_ALIGNMENT = 16      # elements: what the kernels' signature promises


def padded(n):
    return -(-n // ROW_ALIGNMENT) * ROW_ALIGNMENT


def strided(rows, cols, dtype, generator=None, fill=None):
    """A rows x cols view of a matrix whose rows are padded to ROW_ALIGNMENT
    elements (random normal, or `fill`)."""
    if fill is None:
        base = torch.randn(rows, padded(cols), generator=generator, device="cuda",
                           dtype=torch.float32 if dtype.itemsize == 1 else dtype)
        base = base.to(dtype)
    else:
        base = torch.full((rows, padded(cols)), fill, device="cuda", dtype=dtype)
    return base[:, :cols]


def is_fp8(dtype_name):
    return dtype_name.startswith("fp8")


def fp8_scales():
    return [torch.tensor([s], device="cuda") for s in FP8_SCALES]


def tile_matmul(bundle, dtype_name):
    """A function (a, b, c) that writes a @ b into c with the folder's
    matmul variant for dtype_name (for fp8, b is B's [N, K] transpose and
    c = a @ b.T * scales)."""
    stream = torch.cuda.current_stream().cuda_stream
    if is_fp8(dtype_name):
        kernel = bundle.select("matmul_scaled", dtype_name)
        scale_a, scale_b = fp8_scales()

        def run_scaled(a, bt, c):
            check_scaled_matmul.launch(kernel, dtype_name, a, bt, c, scale_a, scale_b)
        return run_scaled, kernel.name
    kernel = bundle.select("matmul", dtype_name)

    def run(a, b, c):
        (m, k), n = a.shape, b.shape[1]
        kernel.launch({"A": runtime.DevicePointer(a.data_ptr(), dtype_name),
                       "B": runtime.DevicePointer(b.data_ptr(), dtype_name),
                       "C": runtime.DevicePointer(c.data_ptr(), dtype_name),
                       "M": m, "N": n, "K": k, "stride_am": a.stride(0),
                       "stride_bk": b.stride(0), "stride_cm": c.stride(0)},
                      a.device.index, stream)
    return run, kernel.name


def implementation(name, bundle, dtype_name):
    """(run(a, b, c), what runs)."""
    if name == "tile":
        return tile_matmul(bundle, dtype_name)
    if is_fp8(dtype_name):
        scale_a, scale_b = fp8_scales()
        return (lambda a, bt, c: torch._scaled_mm(a, bt.t(), scale_a, scale_b,
                                                  out_dtype=torch.bfloat16, out=c)), \
            "torch._scaled_mm"
    return (lambda a, b, c: torch.matmul(a, b, out=c)), "torch.matmul"


def bench_shape(names, bundle, dtype_name, shape, passes, sets_count, target_ms):
    """[record] of each implementation on one shape and type."""
    m, n, k = shape
    dtype = DTYPES[dtype_name]
    generator = torch.Generator(device="cuda").manual_seed(m + n + k)
    if is_fp8(dtype_name):
        # B stored as its [N, K] transpose (column-major B), C in bf16.
        sets = [(strided(m, k, dtype, generator), strided(n, k, dtype, generator),
                 strided(m, n, torch.bfloat16, fill=float("nan")))
                for _ in range(sets_count)]
        expected = (sets[0][0].float() @ sets[0][1].float().T
                    * FP8_SCALES[0] * FP8_SCALES[1])
    else:
        sets = [(strided(m, k, dtype, generator), strided(k, n, dtype, generator),
                 strided(m, n, dtype, fill=float("nan"))) for _ in range(sets_count)]
        expected = sets[0][0].float() @ sets[0][1].float()
    records = {name: {"impl": name, "dtype": dtype_name, "m": m, "n": n, "k": k,
                      "kernel": None, "passes": [], "ms": None, "tflops": None,
                      "rel_error": None, "status": "ok"} for name in names}
    def prepare(name, record):
        run, record["kernel"] = implementation(name, bundle, dtype_name)
        return run

    def check(run, record):
        a, b, c = sets[0]
        c.fill_(float("nan"))
        run(a, b, c)
        record["rel_error"] = ((c.float() - expected).norm() / expected.norm()).item()

    time_in_alternating_passes(names, records, passes, sets, target_ms, prepare, check)
    out = []
    for name in names:
        record = records[name]
        if record["status"] == "ok":
            record["ms"] = statistics.mean(record["passes"])
            record["tflops"] = 2 * m * n * k / (record["ms"] * 1e9)
        out.append(record)
    sets = expected = None
    free_memory()
    return out


def print_table(records, dtypes, shapes):
    by_key = {(r["impl"], r["dtype"], r["m"], r["n"], r["k"]): r for r in records}
    print("\n== GEMM TFLOP/s (2*M*N*K), median; Tile / cuBLAS (target >= 0.9)")
    print(f"{'dtype':6s} {'M x N x K':18s} {'tile':>7s} {'cublas':>7s} {'ratio':>6s} "
          f"{'tile rel. error':>16s}")
    for dtype_name in dtypes:
        for m, n, k in shapes:
            tile_record = by_key.get(("tile", dtype_name, m, n, k))
            cublas = by_key.get(("cublas", dtype_name, m, n, k))
            tile_tflops = tile_record and tile_record["tflops"]
            cublas_tflops = cublas and cublas["tflops"]
            ratio = tile_tflops / cublas_tflops if tile_tflops and cublas_tflops else None
            error = tile_record and tile_record["rel_error"]
            print(f"{dtype_name:6s} {f'{m}x{n}x{k}':18s} {fmt(tile_tflops):>7s} "
                  f"{fmt(cublas_tflops):>7s} {fmt(ratio, 2):>6s} {fmt(error, 6):>16s}")


def parse_list(text, allowed):
    """A comma-separated list of `allowed` names, not empty."""
    values = attention_bench.parse_list(text, str, allowed)
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} names none of {list(allowed)}")
    return values


def parse_shapes(text):
    """"4096x4096x4096,100x72x40" -> [(4096, 4096, 4096), (100, 72, 40)]."""
    return attention_bench.parse_dims(text, ("M", "N", "K"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tile {tile.__version__}")
    parser.add_argument("--dtype", default="fp16,bf16", type=lambda s: parse_list(s, DTYPES))
    parser.add_argument("--shapes", type=parse_shapes,
                        default=",".join("x".join(map(str, s)) for s in SHAPES),
                        help="MxNxK,...")
    parser.add_argument("--impl", default=",".join(IMPLEMENTATIONS),
                        type=lambda s: parse_list(s, IMPLEMENTATIONS))
    parser.add_argument("--kernels", default=None,
                        help="kernel folder (default: the bundle's or build's kernels)")
    parser.add_argument("--target-ms", type=float, default=100.0,
                        help="timed milliseconds per measurement (at least 5 calls)")
    parser.add_argument("--sets", type=int, default=2, help="input sets rotated")
    parser.add_argument("--warm-seconds", type=float, default=1.0,
                        help="matrix products run before the first shape (0: none)")
    parser.add_argument("--passes", type=int, default=2,
                        help="times each shape's implementations run, in alternating order")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"),
                        help="folder for matmul_bench.json")
    args = parser.parse_args()
    if args.passes < 1 or args.sets < 1:
        parser.error("--passes and --sets must be at least 1")
    if not torch.cuda.is_available():
        sys.exit("matmul_bench: no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    bundle = runtime.Bundle(args.kernels or find_kernel_dir())
    device = torch.cuda.get_device_name()
    print(f"device: {device}  tile {tile.__version__}  torch {torch.__version__}  "
          f"kernels {bundle.directory}", flush=True)
    started = time.time()
    warm_gpu(args.warm_seconds)
    records = []
    for dtype_name in args.dtype:
        for shape in args.shapes:
            for record in bench_shape(args.impl, bundle, dtype_name, shape, args.passes,
                                      args.sets, args.target_ms):
                records.append(record)
                print(f"{dtype_name} {'x'.join(map(str, shape)):18s} {record['impl']:7s} "
                      f"{fmt(record['tflops']):>7s} TFLOP/s"
                      + ("" if record["status"] == "ok" else f"  ({record['status']})"),
                      flush=True)
    summary = {"device": device, "tile": tile.__version__, "torch": torch.__version__,
               "command": " ".join(sys.argv), "seconds": time.time() - started,
               "passes": args.passes, "sets": args.sets, "kernels": str(bundle.directory),
               "flops": "2*M*N*K", "rows_padded_to": ROW_ALIGNMENT,
               "fp16_reduced_precision_reduction":
                   torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
               "bf16_reduced_precision_reduction":
                   torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
               "records": records}
    with open(os.path.join(args.out, "matmul_bench.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"matmul_bench: {len(records)} measurements in {args.out} "
          f"({time.time() - started:.0f} s)")
    print_table(records, args.dtype, args.shapes)


if __name__ == "__main__":
    main()
