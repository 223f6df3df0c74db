"""Kernels that accumulate with tl.atomic_add: many programs add into one
tile (as a backward pass accumulates dQ), and a counter whose old values
each program keeps.  test/gpu/atomic_add.sh (test/gpu/run.sh atomic_add)
runs them on the GPU and checks the results:

    PYTHONPATH=python python3 -m tile.compile examples/atomic_add.py:tile_sum \
        --signature "*fp32:16,*fp32:16" --constexpr BLOCK_M=64 --constexpr D=128 \
        --num-warps 8 -o build/user-kernels/tile_sum.mlir
    build/bin/tile-run run build/user-kernels/tile_sum.json --grid 3 \
        X=rand:3x64x128 S=zeros:64x128 --print S
"""

import tile
import tile.language as tl


@tile.jit
def tile_sum(X, S, BLOCK_M: tl.constexpr, D: tl.constexpr):
    """S += X[program]: S ends as the sum of the grid's (BLOCK_M, D) tiles."""
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    offsets = rows[:, None] * D + cols[None, :]
    x = tl.load(X + tl.program_id(0) * BLOCK_M * D + offsets)
    tl.atomic_add(S + offsets, x)


@tile.jit
def take_tickets(COUNTERS, TICKETS, BLOCK: tl.constexpr):
    """Each program adds one to every counter and keeps the values it saw:
    for each counter, the programs' tickets are 0, 1, ..., grid - 1 in some
    order."""
    offsets = tl.arange(0, BLOCK)
    ticket = tl.atomic_add(COUNTERS + offsets, 1)
    tl.store(TICKETS + tl.program_id(0) * BLOCK + offsets, ticket)
