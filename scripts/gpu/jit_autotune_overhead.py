"""Host microseconds a kernel[grid](...) call of tutorial 01's vector add
takes after the first, plain and under @tile.autotune
(test/gpu/check_jit_launch.py's three configs): 2000 calls back to back,
then with the GPU's time. Run from a GPU bundle (scripts/make_gpu_bundle.sh
compiles the kernels into its jit-kernels/):

    python3 jit_autotune_overhead.py
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["TILE_CACHE_DIR"] = os.path.join(HERE, "jit-kernels")
sys.path.insert(0, os.path.join(HERE, "test", "gpu"))
import torch  # noqa: E402

import check_jit_launch as checks  # noqa: E402

n = 98765
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.empty_like(x)


def grid(meta):
    return (checks.tile.cdiv(n, meta["BLOCK_SIZE"]),)


def plain():
    checks.EXAMPLE.add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)


def tuned():
    checks.TUNED_ADD[grid](x, y, out, n)


for name, call in (("plain", plain), ("autotuned", tuned)) * 2:
    call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(2000):
        call()
    host = (time.perf_counter() - start) / 2000 * 1e6
    torch.cuda.synchronize()
    total = (time.perf_counter() - start) / 2000 * 1e6
    print(f"{name}: host {host:.1f} us a call, with the GPU {total:.1f} us")
