"""A GEMM that carries its accumulator in fp16 (or bf16) through the K
loop, as Triton kernels write it with tl.dot(..., out_dtype=tl.float16).
Tile accumulates each step's product in fp32 on the tensor cores and
rounds it once to out_dtype (Triton accumulates in fp16): the result is
the float64 steps rounded so, within a rounding's flip a step.

    c = launch_matmul(a, b, block=64)    # fp16 or bf16 torch tensors
"""

import tile
import tile.language as tl


@tile.jit
def matmul_narrow(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  OUT: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), OUT)
    for k in range(0, K, BK):
        ks = k + tl.arange(0, BK)
        a = tl.load(A + rows[:, None] * K + ks[None, :],
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * N + cols[None, :],
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=OUT)
    tl.store(C + rows[:, None] * N + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def launch_matmul(a, b, block=64):
    """C = A @ B of row-major fp16 or bf16 tensors, the accumulator in their
    type."""
    (m, k), n = a.shape, b.shape[1]
    c = a.new_empty((m, n))
    out = tl.float16 if str(a.dtype) == "torch.float16" else tl.bfloat16
    grid = (tile.cdiv(m, block), tile.cdiv(n, block))
    matmul_narrow[grid](a, b, c, m, n, k, BM=block, BN=block, BK=block, OUT=out)
    return c
