"""PyTorch's softmax bandwidth on the same shapes as Tile's benchmark.

Median of 100 CUDA-event timings after 10 warm-ups; bytes are one fp32 read
and one fp32 write of the matrix. Prints `torch ROWSxCOLS GB/s` per shape.
"""

import sys

import torch


def bench(rows, cols):
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float32)
    for _ in range(10):
        torch.softmax(x, dim=1)
    times = []
    for _ in range(100):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.softmax(x, dim=1)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    milliseconds = times[len(times) // 2]
    return 2 * rows * cols * 4 / (milliseconds * 1e6)


for shape in sys.argv[1:]:
    rows, cols = (int(v) for v in shape.split("x"))
    print(f"torch {shape} {bench(rows, cols):.1f}")
