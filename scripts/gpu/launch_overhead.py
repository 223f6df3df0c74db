"""The host cost of one flash_attn_func call, against the GPU time it buys.

On the classic shape (B=32, N=512, H=16, D=64, causal, fp16) the kernels
take a few hundred microseconds, so the Python runtime's launch path can
decide the time a caller sees. Prints, for Tile's forward, SDPA's flash
forward and Tile's forward + backward: the CPU time a call takes to return
(the GPU queue absorbing the kernels), and the time per call between two
events around calls made back to back (the GPU's, unless the host is
slower); then Tile's forward + backward under cProfile.
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

SHAPE = (32, 512, 16, 64)
CALLS = 200


def main():
    q, k, v = (torch.randn(SHAPE, device="cuda", dtype=torch.float16, requires_grad=True)
               for _ in range(3))
    dout = torch.randn(SHAPE, device="cuda", dtype=torch.float16)

    def tile_forward():
        return flash_attn_func(q, k, v, causal=True)

    def tile_forward_backward():
        torch.autograd.grad(flash_attn_func(q, k, v, causal=True), (q, k, v), dout)

    def sdpa_forward():
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            return F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)

    for name, call in (("tile fwd", tile_forward), ("sdpa-flash fwd", sdpa_forward),
                       ("tile fwd+bwd", tile_forward_backward)):
        for _ in range(20):
            call()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(CALLS):
            call()
        returned = time.perf_counter()
        torch.cuda.synchronize()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(CALLS):
            call()
        end.record()
        end.synchronize()
        print(f"{name:15s} host {1e6 * (returned - start) / CALLS:7.1f} us/call   "
              f"events around {CALLS} calls {1e3 * begin.elapsed_time(end) / CALLS:7.1f} us/call")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(CALLS):
        tile_forward_backward()
    profile.disable()
    torch.cuda.synchronize()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
