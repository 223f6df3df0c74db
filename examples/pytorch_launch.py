"""Kernels launched from PyTorch as Triton's are, ``kernel[grid](...)``:
the vector add, fused softmax and matmul of Triton's tutorials 01-03 and
the seeded dropout of tutorial 04, written in Tile's language
(docs/python-api.md, "Launching from PyTorch").

    PYTHONPATH=python python3 examples/pytorch_launch.py

runs them on CUDA tensors where PyTorch has a GPU, else on CPU tensors
(the interpreter), and compares each with PyTorch.
"""

import tile
import tile.language as tl


@tile.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x, y):
    output = x.new_empty(x.shape)
    n_elements = output.numel()
    add_kernel[lambda meta: (tile.cdiv(n_elements, meta["BLOCK_SIZE"]),)](
        x, y, output, n_elements, BLOCK_SIZE=256)
    return output


@tile.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows,
                   n_cols, BLOCK_SIZE: tl.constexpr):
    # Each program takes rows start, start + step, ... (fewer programs than
    # rows: the grid is what the GPU holds at once).
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in range(row_start, n_rows, row_step):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def softmax(x, programs=64):
    n_rows, n_cols = x.shape
    y = x.new_empty(x.shape)
    softmax_kernel[(min(programs, n_rows),)](
        y, x, x.stride(0), y.stride(0), n_rows, n_cols,
        BLOCK_SIZE=tile.next_power_of_2(n_cols), num_warps=4)
    return y


@tile.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                  BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left),
                    other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N),
                    other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_n[None, :]
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a, b, block_m=64, block_n=64, block_k=32):
    M, K = a.shape
    K, N = b.shape
    c = a.new_empty((M, N))
    matmul_kernel[lambda meta: (tile.cdiv(M, meta["BLOCK_SIZE_M"]),
                                tile.cdiv(N, meta["BLOCK_SIZE_N"]))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n,
        BLOCK_SIZE_K=block_k, num_warps=4, num_stages=3)
    return c


@tile.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # The mask is a function of (seed, offset): nothing to store, and the
    # same seed gives it again (the backward of a dropout, say).
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x, p, seed):
    output = x.new_empty(x.shape)
    n_elements = x.numel()
    seeded_dropout_kernel[lambda meta: (tile.cdiv(n_elements, meta["BLOCK_SIZE"]),)](
        x, output, n_elements, p, seed, BLOCK_SIZE=1024)
    return output


def main():
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x, y = torch.rand(1000, device=device), torch.rand(1000, device=device)
    print("add:", torch.allclose(add(x, y), x + y))
    x = torch.randn(37, 1000, device=device)
    print("softmax:", torch.allclose(softmax(x), torch.softmax(x, dim=1), atol=1e-6))
    a = torch.randn(100, 70, device=device, dtype=torch.float16)
    b = torch.randn(70, 90, device=device, dtype=torch.float16)
    print("matmul:", torch.allclose(matmul(a, b).float(), a.float() @ b.float(), atol=1e-2,
                                    rtol=1e-2))
    x = torch.randn(1000, device=device)
    kept = seeded_dropout(x, 0.5, seed=123) != 0
    print("dropout: same seed, same mask:",
          torch.equal(kept, seeded_dropout(x, 0.5, seed=123) != 0),
          f"kept {kept.float().mean().item():.2f} of 0.5")


if __name__ == "__main__":
    main()
