"""A kernel that stores each of its scalar arguments, one of every width a
parameter can have, as fp32: test/gpu/softmax.sh launches it through
tile-run's generic mode to check that each reaches the kernel intact."""

import tile
import tile.language as tl


@tile.jit
def store_scalars(OUT, half, brain, single, double, flag, byte, short, wide):
    i = tl.arange(0, 8)
    values = tl.where(i == 0, half.to(tl.float32), 0.0)
    values = tl.where(i == 1, brain.to(tl.float32), values)
    values = tl.where(i == 2, single, values)
    values = tl.where(i == 3, double.to(tl.float32), values)
    values = tl.where(i == 4, flag.to(tl.float32), values)
    values = tl.where(i == 5, byte.to(tl.float32), values)
    values = tl.where(i == 6, short.to(tl.float32), values)
    values = tl.where(i == 7, wide.to(tl.float32), values)
    tl.store(OUT + i, values)
