#!/usr/bin/env python3
"""fp8 attention forward speed on one GPU: Tile's e4m3 forward
(attn_fwd_fp8e4nv_d<D>) beside its fp16 forward and cuDNN's fp16 forward
(SDPA), same run, same shapes (batch * N = 16384, 16 heads at d128, 32 at
d64, no mask). CUDA events around each call, median of many after warm-up.

    python3 benchmarks/attention_fp8_bench.py [--kernels DIR] [--n 4096,16384]
"""

import argparse
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "gpu"))

import torch  # noqa: E402

from check_fp8_attention import DESCALE, fp8_inputs, launch  # noqa: E402
from tile import runtime  # noqa: E402
from tile.attention.bundle import find_kernel_dir  # noqa: E402

TOKENS = 16384
HEADS = {64: 32, 128: 16}


def median_ms(run, calls=30):
    for _ in range(5):
        run()
    times = []
    for _ in range(calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench_shape(bundle, d, n, stream):
    """TFLOP/s of (fp8 Tile, fp16 Tile, fp16 cuDNN) at head dim d, length n."""
    z, h = TOKENS // n, HEADS[d]
    flops = 4 * z * h * n * n * d
    generator = torch.Generator(device="cuda").manual_seed(n)
    q8, k8, vt8 = fp8_inputs(z, h, n, d, generator)
    o = torch.empty(z, h, n, d, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(z * h * n, device="cuda")
    descale = torch.tensor(DESCALE, device="cuda")
    fp8 = bundle.find(f"attn_fwd_fp8e4nv_d{d}")
    t8 = median_ms(lambda: launch(fp8, q8, k8, vt8, o, lse, descale))
    q, k, v = (torch.randn(z, h, n, d, device="cuda", dtype=torch.float16)
               for _ in range(3))
    o16 = torch.empty_like(q)
    fp16 = bundle.select("attn_fwd", "fp16",
                         {"HEAD_DIM": d, "CAUSAL": False, "WINDOW": False, "SOFTCAP": False},
                         length=n)
    args16 = {"Q": runtime.DevicePointer(q.data_ptr(), "fp16"),
              "K": runtime.DevicePointer(k.data_ptr(), "fp16"),
              "V": runtime.DevicePointer(v.data_ptr(), "fp16"),
              "O": runtime.DevicePointer(o16.data_ptr(), "fp16"),
              "LSE": runtime.DevicePointer(lse.data_ptr(), "fp32"),
              "sm_scale": 1 / math.sqrt(d), "stride_z": q.stride(0),
              "stride_h": q.stride(1), "stride_n": q.stride(2), "stride_kz": k.stride(0),
              "stride_kh": k.stride(1), "stride_kn": k.stride(2), "Z": z, "H": h,
              "H_KV": h, "N_CTX": n, "N_KV": n, "causal_offset": 0, "window_offset": 0,
              "softcap": 0.0, "MAX_N_CTX": n, "VARLEN": 0, "dropout_p": 0.0,
              # Not packed, no ALiBi, no dropout: never read.
              "CU_SEQLENS_Q": runtime.DevicePointer(q.data_ptr(), "i32"),
              "CU_SEQLENS_K": runtime.DevicePointer(k.data_ptr(), "i32"),
              "ALIBI_SLOPES": runtime.DevicePointer(lse.data_ptr(), "fp32"),
              "DROPOUT_SEEDS": runtime.DevicePointer(lse.data_ptr(), "i64")}
    t16 = median_ms(lambda: fp16.launch(args16, q.device.index, stream))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
        tc = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))
    return tuple(flops / t / 1e9 for t in (t8, t16, tc))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default=None)
    parser.add_argument("--n", default="4096,16384")
    args = parser.parse_args()
    bundle = runtime.Bundle(args.kernels or find_kernel_dir())
    stream = torch.cuda.current_stream().cuda_stream
    print(f"device: {torch.cuda.get_device_name()}")
    print(f"{'D':>4s} {'N':>6s} {'fp8 tile':>9s} {'fp16 tile':>10s} {'fp16 cudnn':>11s}  TFLOP/s")
    for d in (64, 128):
        for n in map(int, args.n.split(",")):
            fp8, fp16, cudnn = bench_shape(bundle, d, n, stream)
            print(f"{d:4d} {n:6d} {fp8:9.1f} {fp16:10.1f} {cudnn:11.1f}")


if __name__ == "__main__":
    main()
