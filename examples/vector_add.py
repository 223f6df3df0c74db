"""A user's own kernel: z = x + y over n elements, BLOCK per program.

Compile it and run it with tile-run's generic mode (see README.md):

    PYTHONPATH=python python3 -m tile.compile examples/vector_add.py:vector_add \
        --signature "*fp32,*fp32,*fp32,i32" --constexpr BLOCK=256 --num-warps 4 \
        -o build/user-kernels/vector_add.mlir
    build/bin/tile-run run build/user-kernels/vector_add.json --grid 40 \
        X=rand:10000 Y=rand:10000 Z=zeros:10000 n=10000 --print Z
"""

import tile
import tile.language as tl


@tile.jit
def vector_add(X, Y, Z, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(X + offsets, mask=mask)
    y = tl.load(Y + offsets, mask=mask)
    tl.store(Z + offsets, x + y, mask=mask)
