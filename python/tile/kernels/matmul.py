"""GEMM: C[M, N] = A[M, K] @ B[K, N], fp32 accumulation, C in A's type.

A, B and C are row-major: the last dimension is contiguous, and each
matrix's row stride (in elements) is passed in, so that a view of rows of
a wider matrix works.  Any M, N, K >= 1: blocks that cross them are read
with zero padding and stored with boundary checks.

- matmul: grid (cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N),).  Program ids are
  dealt out GROUP_M block rows at a time, column by column (as Triton's
  matmul tutorial does), so that the programs running at once share their
  A rows and B columns in L2.
- matmul_scaled: the same grid; C = (A @ B) * a_scale * b_scale in bf16,
  B passed transposed ([N, K], k contiguous), for fp8 operands.

The K loop reads A and B through block pointers advanced by BLOCK_K each
step, which tilegpu-pipeline copies ahead with cp.async.  It copies no
block with a boundary check along its contiguous dimension (a check could
split a 16-byte copy), so the loop runs over whole K blocks and the K tail
is a step of its own; and a program whose columns cross N, the only one
that checks B along N, takes a loop of its own.
"""

import tile
import tile.language as tl


@tile.jit
def _grouped_tile(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  GROUP_M: tl.constexpr):
    """(block row, block column) of this program: ids run down groups of
    GROUP_M block rows, one column of the group after another."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    programs_per_group = GROUP_M * num_pid_n
    first_pid_m = pid // programs_per_group * GROUP_M
    # The last group may hold fewer block rows.
    group_rows = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_in_group = pid % programs_per_group
    return first_pid_m + pid_in_group % group_rows, pid_in_group // group_rows


@tile.jit
def _k_steps(acc, A, B, M, N, K, stride_am, stride_b, row, col, lo, hi,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             K_MASK: tl.constexpr, N_MASK: tl.constexpr, B_T: tl.constexpr):
    """acc plus A[row:, k] @ B[k, col:] over k in [lo, hi), BLOCK_K at a
    time.  Rows past M always read zeros (a check along A's rows keeps the
    copies whole); K_MASK zero-pads k past K, N_MASK columns past N.  B_T:
    B is stored transposed, as an [N, K] matrix of row stride stride_b
    (k contiguous, as wgmma reads 8-bit operands); else [K, N].

    Each call makes block pointers of its own: tilegpu-coalesce gives a
    pointer 16-byte vectors only where every load of it may have them, and
    a check along K or N (of a K or N not known to be a multiple of 8)
    would take them from the unchecked loop too."""
    a_block = tl.make_block_ptr(base=A, shape=(M, K), strides=(stride_am, 1),
                                offsets=(row, lo), block_shape=(BLOCK_M, BLOCK_K),
                                order=(1, 0))
    if B_T:
        b_block = tl.make_block_ptr(base=B, shape=(N, K), strides=(stride_b, 1),
                                    offsets=(col, lo), block_shape=(BLOCK_N, BLOCK_K),
                                    order=(1, 0))
    else:
        b_block = tl.make_block_ptr(base=B, shape=(K, N), strides=(stride_b, 1),
                                    offsets=(lo, col), block_shape=(BLOCK_K, BLOCK_N),
                                    order=(1, 0))
    for _ in range(lo, hi, BLOCK_K):
        if K_MASK:
            a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        else:
            a = tl.load(a_block, boundary_check=(0,), padding_option="zero")
        if B_T:
            if K_MASK and N_MASK:
                b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
            elif K_MASK:
                b = tl.load(b_block, boundary_check=(1,), padding_option="zero")
            elif N_MASK:
                b = tl.load(b_block, boundary_check=(0,), padding_option="zero")
            else:
                b = tl.load(b_block)
            acc = tl.dot(a, tl.trans(b), acc)
        else:
            if K_MASK and N_MASK:
                b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
            elif K_MASK:
                b = tl.load(b_block, boundary_check=(0,), padding_option="zero")
            elif N_MASK:
                b = tl.load(b_block, boundary_check=(1,), padding_option="zero")
            else:
                b = tl.load(b_block)
            acc = tl.dot(a, b, acc)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        if B_T:
            b_block = tl.advance(b_block, (0, BLOCK_K))
        else:
            b_block = tl.advance(b_block, (BLOCK_K, 0))
    return acc


@tile.jit
def _block_product(A, B, C, M, N, K, stride_am, stride_b, stride_cm, row, col, scale,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   N_MASK: tl.constexpr, B_T: tl.constexpr, SCALED: tl.constexpr):
    """C[row:row + BLOCK_M, col:col + BLOCK_N], stored within M and N: the
    whole K blocks, then the K tail (no step when BLOCK_K divides K); times
    `scale` when SCALED."""
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    full_k = K // BLOCK_K * BLOCK_K
    acc = _k_steps(acc, A, B, M, N, K, stride_am, stride_b, row, col, 0, full_k,
                   BLOCK_M, BLOCK_N, BLOCK_K, False, N_MASK, B_T)
    acc = _k_steps(acc, A, B, M, N, K, stride_am, stride_b, row, col, full_k, K,
                   BLOCK_M, BLOCK_N, BLOCK_K, True, N_MASK, B_T)
    if SCALED:
        acc = acc * scale
    c_block = tl.make_block_ptr(base=C, shape=(M, N), strides=(stride_cm, 1),
                                offsets=(row, col), block_shape=(BLOCK_M, BLOCK_N),
                                order=(1, 0))
    c = acc.to(C.dtype.element_ty)
    if N_MASK:
        tl.store(c_block, c, boundary_check=(0, 1))
    else:
        tl.store(c_block, c, boundary_check=(0,))


@tile.jit(launch=tile.Launch(grid="cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"))
def matmul(A, B, C, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr = 8):
    tl.static_assert(GROUP_M >= 1, "GROUP_M must be at least 1")
    pid_m, pid_n = _grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    row = pid_m * BLOCK_M
    col = pid_n * BLOCK_N
    if col + BLOCK_N <= N:
        _block_product(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, row, col, 1.0,
                       BLOCK_M, BLOCK_N, BLOCK_K, False, False, False)
    else:
        _block_product(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, row, col, 1.0,
                       BLOCK_M, BLOCK_N, BLOCK_K, True, False, False)


@tile.jit(launch=tile.Launch(grid="cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"))
def matmul_scaled(A, B, C, A_SCALE, B_SCALE, M, N, K, stride_am, stride_bn, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr = 8):
    """C = (A @ B) * A_SCALE[0] * B_SCALE[0], as torch._scaled_mm: A [M, K]
    row-major, B column-major, passed as its transpose, an [N, K] row-major
    matrix of row stride stride_bn; per-tensor scales in device memory, so
    that a caller's descale factors need not be read on the host.  For fp8
    operands (e4m3, e5m2), which wgmma reads with k contiguous only."""
    tl.static_assert(GROUP_M >= 1, "GROUP_M must be at least 1")
    pid_m, pid_n = _grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    row = pid_m * BLOCK_M
    col = pid_n * BLOCK_N
    scale = tl.load(A_SCALE) * tl.load(B_SCALE)
    if col + BLOCK_N <= N:
        _block_product(A, B, C, M, N, K, stride_am, stride_bn, stride_cm, row, col, scale,
                       BLOCK_M, BLOCK_N, BLOCK_K, False, True, True)
    else:
        _block_product(A, B, C, M, N, K, stride_am, stride_bn, stride_cm, row, col, scale,
                       BLOCK_M, BLOCK_N, BLOCK_K, True, True, True)
