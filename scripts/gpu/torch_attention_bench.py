"""PyTorch scaled_dot_product_attention, each backend, on Tile's benchmark shapes.

fp16, [B, H, N, D], B*N fixed (H=32 at D=64, H=16 at D=128); forward and
backward timed separately with CUDA events, median of 20 after 3 warm-ups.
FLOPs: forward 4*B*H*N*N*D (half when causal), backward 2.5 times that.
Prints `BACKEND D N full|--causal FWD BWD` (TFLOP/s; - where unavailable).
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION,
            "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def median_ms(fn, warmup=3, reps=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def bench(backend, d, n, causal):
    h = 32 if d == 64 else 16
    b = (65536 if d == 64 else 32768) // n
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16,
                           requires_grad=True) for _ in range(3))
    flops = 4 * b * h * n * n * d * (0.5 if causal else 1.0)
    with sdpa_kernel([BACKENDS[backend]]):
        def forward():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        fwd_ms = median_ms(forward)
        out = forward()
        grad = torch.randn_like(out)

        def backward():
            torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
        bwd_ms = median_ms(backward)
    return flops / fwd_ms / 1e9, 2.5 * flops / bwd_ms / 1e9


for backend in BACKENDS:
    for d in (64, 128):
        for n in (1024, 4096):
            for causal in (False, True):
                try:
                    fwd, bwd = bench(backend, d, n, causal)
                    result = f"{fwd:.1f} {bwd:.1f}"
                except RuntimeError:
                    result = "- -"
                print(f"{backend} {d} {n} {'--causal' if causal else 'full'} {result}")
