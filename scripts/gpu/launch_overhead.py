"""The host cost of one flash_attn_func call, against the GPU time it buys.

On the classic shape (B=32, N=512, H=16, D=64, causal, fp16) the kernels
take a few hundred microseconds, so the Python runtime's launch path can
decide the time a caller sees. Prints, for Tile's forward and forward +
backward and for SDPA's flash backend: the CPU time a call takes to return
(the GPU queue absorbing the kernels), the time per call between two
events around calls made back to back (the GPU's, unless the host is
slower), and the time per replay of the same calls captured once in a
CUDA graph (no host work between kernels); then where the backward's
Python path spends its time, under cProfile.
Run from the bundle: python3 launch_overhead.py
"""

import cProfile
import pstats
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, "python")
from tile.attention import flash_attn_func  # noqa: E402
from tile.attention.functional import _flash_attn_backward, _forward  # noqa: E402

SHAPE = (32, 512, 16, 64)
CALLS = 200


def per_call_us(call, calls=CALLS):
    """(host, events) microseconds a call, after a warm-up."""
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    returned = time.perf_counter()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(calls):
        call()
    end.record()
    end.synchronize()
    return 1e6 * (returned - start) / calls, 1e3 * begin.elapsed_time(end) / calls


def graph_replay_us(call):
    """Microseconds a replay of `call` captured in a CUDA graph (warmed up on
    a side stream first, as torch.cuda.graph asks)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return per_call_us(graph.replay)[1]


def main():
    q, k, v = (torch.randn(SHAPE, device="cuda", dtype=torch.float16, requires_grad=True)
               for _ in range(3))
    dout = torch.randn(SHAPE, device="cuda", dtype=torch.float16)

    def tile_forward():
        return flash_attn_func(q, k, v, causal=True)

    def tile_forward_backward():
        torch.autograd.grad(flash_attn_func(q, k, v, causal=True), (q, k, v), dout)

    def sdpa_call(backward):
        def call():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                out = F.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            if backward:
                torch.autograd.grad(out, (q, k, v), dout.transpose(1, 2))
        return call

    print(f"{'call':22s} {'host us':>9s} {'events us':>10s} {'graph replay us':>16s}")
    for name, call in (("tile fwd", tile_forward),
                       ("tile fwd+bwd", tile_forward_backward),
                       ("sdpa-flash fwd", sdpa_call(False)),
                       ("sdpa-flash fwd+bwd", sdpa_call(True))):
        host, events = per_call_us(call)
        print(f"{name:22s} {host:9.1f} {events:10.1f} {graph_replay_us(call):16.1f}",
              flush=True)

    with torch.no_grad():
        out, lse, *_ = _forward(q, k, v, True, SHAPE[-1] ** -0.5)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(CALLS):
        _flash_attn_backward(dout, q, k, v, out, lse, True, None)
    profile.disable()
    torch.cuda.synchronize()
    print(f"\n_flash_attn_backward, {CALLS} calls under cProfile:")
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
