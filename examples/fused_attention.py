"""Fused attention, forward and backward, as Triton's tutorial 06 writes it
(a program a query block for the forward; for the backward, a program a key
block for dK and dV and a query block for dQ, without atomics), launched
from PyTorch with ``kernel[grid](...)`` and wrapped in an autograd
function.  Written in Triton's vocabulary: with ``import triton`` and
``import triton.language as tl`` instead of Tile's, the kernels are
Triton's.  (Tile's own attention kernels, python/tile/kernels/attention.py,
are the fast ones: ``tile.attention.flash_attn_func``.)

    PYTHONPATH=python python3 examples/fused_attention.py

runs it on CUDA tensors where PyTorch has a GPU, else on CPU tensors (the
interpreter), and compares it with PyTorch.
"""

import tile
import tile.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # Triton reads only constexpr globals


@tile.jit
def attn_fwd_kernel(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_n, H, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offset + offs_m[:, None] * stride_n + offs_d[None, :],
                mask=offs_m[:, None] < N_CTX, other=0.0)
    # The running row max m_i and sum l_i of exp2, in base 2.
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * LOG2E
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    else:
        hi = N_CTX
    for start_n in tl.range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k_t = tl.load(K + offset + cols[None, :] * stride_n + offs_d[:, None],
                      mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k_t) * qk_scale
        visible = cols[None, :] < N_CTX
        if CAUSAL:
            visible = visible & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(visible, qk, -float("inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + offset + cols[:, None] * stride_n + offs_d[None, :],
                    mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij
    # M keeps each row's log-sum-exp in base 2, for the backward.
    tl.store(M + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < N_CTX)
    acc = acc / l_i[:, None]
    tl.store(Out + offset + offs_m[:, None] * stride_n + offs_d[None, :],
             acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


@tile.jit
def attn_bwd_preprocess_kernel(O, DO, Delta, stride_z, stride_h, stride_n, H, N_CTX,
                               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # Delta = rowsum(O * dO): the dot of each row's P with its dP.
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    offset = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offset + off_m[:, None] * stride_n + offs_d[None, :]
    o = tl.load(O + rows, mask=off_m[:, None] < N_CTX, other=0.0).to(tl.float32)
    do = tl.load(DO + rows, mask=off_m[:, None] < N_CTX, other=0.0).to(tl.float32)
    tl.store(Delta + off_hz * N_CTX + off_m, tl.sum(o * do, axis=1), mask=off_m < N_CTX)


@tile.jit
def attn_bwd_kernel(Q, K, V, sm_scale, DO, DQ, DK, DV, M, Delta, stride_z, stride_h, stride_n,
                    H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M1: tl.constexpr,
                    BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
                    CAUSAL: tl.constexpr):
    # Program pid: dK and dV of key block pid (over every query block that
    # sees it), then dQ of query block pid (over every key block it sees).
    pid = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    Q += offset
    K += offset
    V += offset
    DO += offset
    DQ += offset
    DK += offset
    DV += offset
    M += off_hz * N_CTX
    Delta += off_hz * N_CTX
    offs_d = tl.arange(0, HEAD_DIM)
    qk_scale = sm_scale * LOG2E

    # -- dK, dV ---------------------------------------------------------
    offs_n = pid * BLOCK_N1 + tl.arange(0, BLOCK_N1)
    key_ok = offs_n[:, None] < N_CTX
    k = tl.load(K + offs_n[:, None] * stride_n + offs_d[None, :], mask=key_ok, other=0.0)
    v = tl.load(V + offs_n[:, None] * stride_n + offs_d[None, :], mask=key_ok, other=0.0)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        lo = pid * BLOCK_N1 // BLOCK_M1 * BLOCK_M1
    else:
        lo = 0
    for start_m in tl.range(lo, N_CTX, BLOCK_M1):
        offs_m = start_m + tl.arange(0, BLOCK_M1)
        query_ok = offs_m < N_CTX
        q_t = tl.load(Q + offs_m[None, :] * stride_n + offs_d[:, None],
                      mask=query_ok[None, :], other=0.0)
        m = tl.load(M + offs_m, mask=query_ok, other=0.0)
        p_t = tl.math.exp2(tl.dot(k, q_t) * qk_scale - m[None, :])
        visible = query_ok[None, :]
        if CAUSAL:
            visible = visible & (offs_m[None, :] >= offs_n[:, None])
        p_t = tl.where(visible, p_t, 0.0)
        do = tl.load(DO + offs_m[:, None] * stride_n + offs_d[None, :],
                     mask=query_ok[:, None], other=0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        delta = tl.load(Delta + offs_m, mask=query_ok, other=0.0)
        dp_t = tl.dot(v, tl.trans(do))
        ds_t = (p_t * (dp_t - delta[None, :])).to(q_t.dtype)
        dk += tl.dot(ds_t, tl.trans(q_t))
    tl.store(DV + offs_n[:, None] * stride_n + offs_d[None, :], dv.to(DV.dtype.element_ty),
             mask=key_ok)
    tl.store(DK + offs_n[:, None] * stride_n + offs_d[None, :],
             (dk * sm_scale).to(DK.dtype.element_ty), mask=key_ok)

    # -- dQ -------------------------------------------------------------
    offs_m = pid * BLOCK_M2 + tl.arange(0, BLOCK_M2)
    query_ok = offs_m < N_CTX
    q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :], mask=query_ok[:, None],
                other=0.0)
    do = tl.load(DO + offs_m[:, None] * stride_n + offs_d[None, :], mask=query_ok[:, None],
                 other=0.0)
    m = tl.load(M + offs_m, mask=query_ok, other=0.0)
    delta = tl.load(Delta + offs_m, mask=query_ok, other=0.0)
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        hi = tl.minimum((pid + 1) * BLOCK_M2, N_CTX)
    else:
        hi = N_CTX
    for start_n in tl.range(0, hi, BLOCK_N2):
        cols = start_n + tl.arange(0, BLOCK_N2)
        k_t = tl.load(K + cols[None, :] * stride_n + offs_d[:, None], mask=cols[None, :] < N_CTX,
                      other=0.0)
        v_t = tl.load(V + cols[None, :] * stride_n + offs_d[:, None], mask=cols[None, :] < N_CTX,
                      other=0.0)
        p = tl.math.exp2(tl.dot(q, k_t) * qk_scale - m[:, None])
        visible = query_ok[:, None] & (cols[None, :] < N_CTX)
        if CAUSAL:
            visible = visible & (offs_m[:, None] >= cols[None, :])
        p = tl.where(visible, p, 0.0)
        dp = tl.dot(do, v_t)
        ds = (p * (dp - delta[:, None])).to(k_t.dtype)
        dq += tl.dot(ds, tl.trans(k_t))
    tl.store(DQ + offs_m[:, None] * stride_n + offs_d[None, :],
             (dq * sm_scale).to(DQ.dtype.element_ty), mask=query_ok[:, None])


def _attention_autograd():
    import torch

    class _Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, sm_scale, blocks):
            z, h, n, d = q.shape
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            o = torch.empty_like(q)
            m = torch.empty((z * h, n), device=q.device, dtype=torch.float32)
            block_m, block_n = blocks["fwd"]
            attn_fwd_kernel[(tile.cdiv(n, block_m), z * h)](
                q, k, v, sm_scale, m, o, q.stride(0), q.stride(1), q.stride(2), h, n,
                HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, num_warps=4)
            ctx.save_for_backward(q, k, v, o, m)
            ctx.causal, ctx.sm_scale, ctx.blocks = causal, sm_scale, blocks
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, m = ctx.saved_tensors
            z, h, n, d = q.shape
            do = do.contiguous()
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            delta = torch.empty_like(m)
            attn_bwd_preprocess_kernel[(tile.cdiv(n, 64), z * h)](
                o, do, delta, q.stride(0), q.stride(1), q.stride(2), h, n, HEAD_DIM=d,
                BLOCK_M=64)
            block_m1, block_n1, block_m2, block_n2 = ctx.blocks["bwd"]
            programs = max(tile.cdiv(n, block_n1), tile.cdiv(n, block_m2))
            attn_bwd_kernel[(programs, z * h)](
                q, k, v, ctx.sm_scale, do, dq, dk, dv, m, delta, q.stride(0), q.stride(1),
                q.stride(2), h, n, HEAD_DIM=d, BLOCK_M1=block_m1, BLOCK_N1=block_n1,
                BLOCK_M2=block_m2, BLOCK_N2=block_n2, CAUSAL=ctx.causal, num_warps=4)
            return dq, dk, dv, None, None, None

    return _Attention


_ATTENTION = None
# Block sizes: the forward's (BLOCK_M, BLOCK_N), the backward's (BLOCK_M1,
# BLOCK_N1, BLOCK_M2, BLOCK_N2).
BLOCKS = {"fwd": (64, 64), "bwd": (32, 64, 64, 32)}


def attention(q, k, v, causal=False, sm_scale=None, blocks=None):
    """softmax(q kᵀ · sm_scale) v over (batch, heads, seqlen, head_dim)
    tensors, differentiable."""
    global _ATTENTION
    if _ATTENTION is None:
        _ATTENTION = _attention_autograd()
    if sm_scale is None:
        sm_scale = q.shape[-1] ** -0.5
    return _ATTENTION.apply(q, k, v, causal, sm_scale, blocks or BLOCKS)


def main():
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    shape = (2, 3, 300, 64) if device == "cuda" else (1, 2, 77, 32)
    q, k, v = (torch.randn(shape, device=device, dtype=torch.float16, requires_grad=True)
               for _ in range(3))
    do = torch.randn(shape, device=device, dtype=torch.float16)
    for causal in (False, True):
        out = attention(q, k, v, causal)
        out.backward(do)
        grads = [t.grad.clone() for t in (q, k, v)]
        for t in (q, k, v):
            t.grad = None
        ref = torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), is_causal=causal)
        ref.backward(do.float())
        ok = torch.allclose(out.float(), ref, atol=1e-2) and all(
            torch.allclose(g.float(), t.grad.float(), atol=2e-2) for g, t in zip(grads, (q, k, v)))
        for t in (q, k, v):
            t.grad = None
        print(f"fused attention, causal={causal}:", ok)


if __name__ == "__main__":
    main()
