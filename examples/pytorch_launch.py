"""Kernels launched from PyTorch as Triton's are, ``kernel[grid](...)``:
the vector add, fused softmax and matmul of Triton's tutorials 01-03, the
seeded dropout of tutorial 04, the layer norm of tutorial 05 (its
backward's partial sums guarded by locks) and the persistent matmul of
tutorial 09, written in Tile's language
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
                   n_cols, BLOCK_SIZE: tl.constexpr, NUM_STAGES: tl.constexpr):
    # Each program takes rows start, start + step, ... (fewer programs than
    # rows: the grid is what the GPU holds at once). With NUM_STAGES > 1 the
    # next rows are copied ahead while this one is computed, through shared
    # memory (which costs programs an SM).
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES):
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


def softmax(x, programs=64, num_stages=1):
    n_rows, n_cols = x.shape
    y = x.new_empty(x.shape)
    softmax_kernel[(min(programs, n_rows),)](
        y, x, x.stride(0), y.stride(0), n_rows, n_cols,
        BLOCK_SIZE=tile.next_power_of_2(n_cols), NUM_STAGES=num_stages, num_warps=4)
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


@tile.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    # One row a program, in chunks of BLOCK_SIZE columns: its mean, its
    # variance, then the normalised row scaled and shifted.
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    sums = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        sums += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(sums, axis=0) / N
    squares = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        squares += x * x
    rstd = 1 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@tile.jit
def layer_norm_bwd_dx_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # dX of one row; its dW and dB go into the partial sums of its group of
    # rows (row % GROUP_SIZE_M), one program at a time under the group's
    # lock: Lock[g] held (1) or free (0), Lock[GROUP_SIZE_M + g] whether the
    # group's sums were written yet.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    group = row % GROUP_SIZE_M
    Lock += group
    Count = Lock + GROUP_SIZE_M
    DW = DW + group * N + cols
    DB = DB + group * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@tile.jit
def layer_norm_bwd_dwdb_kernel(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                               BLOCK_SIZE_N: tl.constexpr):
    # The groups' partial sums summed, BLOCK_SIZE_N columns a program.
    cols = tl.program_id(0) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def layer_norm(x, weight, bias, eps=1e-5):
    """y = layer_norm(x) over the last dimension; returns y and what the
    backward needs (mean, rstd)."""
    import torch
    rows = x.reshape(-1, x.shape[-1])
    M, N = rows.shape
    y = rows.new_empty(rows.shape)
    mean = rows.new_empty(M, dtype=torch.float32)
    rstd = rows.new_empty(M, dtype=torch.float32)
    layer_norm_fwd_kernel[(M,)](rows, y, weight, bias, mean, rstd, rows.stride(0), N, eps,
                                BLOCK_SIZE=min(1024, tile.next_power_of_2(N)), num_warps=4)
    return y.reshape(x.shape), mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd, group_size_m=16):
    """dx, dweight, dbias of layer_norm's y = layer_norm(x) given dy."""
    import torch
    rows = x.reshape(-1, x.shape[-1])
    dy = dy.reshape(rows.shape).contiguous()
    M, N = rows.shape
    block_n = tile.next_power_of_2(N)
    locks = rows.new_zeros(2 * group_size_m, dtype=torch.int32)
    partial_dw = rows.new_zeros((group_size_m, N), dtype=weight.dtype)
    partial_db = rows.new_zeros((group_size_m, N), dtype=weight.dtype)
    dx = rows.new_empty(rows.shape)
    layer_norm_bwd_dx_kernel[(M,)](dx, dy, partial_dw, partial_db, rows, weight, mean, rstd,
                                   locks, rows.stride(0), N, GROUP_SIZE_M=group_size_m,
                                   BLOCK_SIZE_N=block_n, num_warps=4)
    dw = weight.new_empty(N)
    db = weight.new_empty(N)
    layer_norm_bwd_dwdb_kernel[lambda meta: (tile.cdiv(N, meta["BLOCK_SIZE_N"]),)](
        partial_dw, partial_db, dw, db, min(group_size_m, M), N, BLOCK_SIZE_M=32,
        BLOCK_SIZE_N=128, num_warps=4)
    return dx.reshape(x.shape), dw, db


@tile.jit
def _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    # Output tiles in groups of GROUP_SIZE_M rows of tiles, column by column
    # within a group: programs running at once share rows of A and columns
    # of B in L2.
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@tile.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                             stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                             BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                             GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    # As many programs as the GPU runs at once, each taking output tiles
    # start_pid, start_pid + NUM_SMS, ... until none is left.
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    offs_k_for_mask = tl.arange(0, BLOCK_SIZE_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        start_m = pid_m * BLOCK_SIZE_M
        start_n = pid_n * BLOCK_SIZE_N
        # Rows and columns past the matrices read row and column 0 (their
        # results are not stored), so that the loads need no mask there.
        offs_am = start_m + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = start_n + tl.arange(0, BLOCK_SIZE_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            k_left = K - ki * BLOCK_SIZE_K
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < k_left, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
        offs_cm = start_m + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = start_n + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, accumulator.to(tl.float16), mask=c_mask)


def matmul_persistent(a, b, num_sms=None, block_m=128, block_n=128, block_k=64):
    """a @ b (fp16) by one program per SM (num_sms: the device's count, 4 on
    the CPU), as tutorial 09's persistent matmul."""
    import torch
    M, K = a.shape
    K, N = b.shape
    if num_sms is None:
        num_sms = (torch.cuda.get_device_properties(a.device).multi_processor_count
                   if a.is_cuda else 4)
    c = a.new_empty((M, N))
    num_tiles = tile.cdiv(M, block_m) * tile.cdiv(N, block_n)
    matmul_persistent_kernel[(min(num_sms, num_tiles),)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n,
        BLOCK_SIZE_K=block_k, GROUP_SIZE_M=8, NUM_SMS=num_sms, num_warps=8, num_stages=3)
    return c


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
    a = torch.randn(300, 200, device=device, dtype=torch.float16)
    b = torch.randn(200, 333, device=device, dtype=torch.float16)
    print("persistent matmul:", torch.allclose(matmul_persistent(a, b).float(),
                                               a.float() @ b.float(), atol=1e-1, rtol=1e-2))
    x = torch.randn(300, 777, device=device)
    w, b = torch.randn(777, device=device), torch.randn(777, device=device)
    dy = torch.randn_like(x)
    y, mean, rstd = layer_norm(x, w, b)
    dx, dw, db = layer_norm_backward(dy, x, w, mean, rstd)
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    yr = torch.nn.functional.layer_norm(xr, (777,), wr, br, eps=1e-5)
    yr.backward(dy)
    print("layer norm:", torch.allclose(y, yr, atol=1e-4),
          all(torch.allclose(g, r.grad, atol=1e-3, rtol=1e-3)
              for g, r in ((dx, xr), (dw, wr), (db, br))))


if __name__ == "__main__":
    main()
