"""Triton's tutorials 01-04 in Tile's language (examples/pytorch_launch.py:
vector add, fused softmax, matmul with tl.dot, seeded dropout), and a
kernel of newer builtins (argmax, softmax, clamp, umulhi, xor_sum),
launched from PyTorch as Triton's are, kernel[grid](...), on CUDA tensors: each
output against a float64 reference of the same inputs (dropout's mask
against Philox on Python ints, bit for bit), at sizes that are not
multiples of the blocks; strided rows, a transposed operand, the constant 1 (n = 1), a
side stream, and TILE_INTERPRET=1 (CUDA tensors on the interpreter, where
the bundle has it). One PASS, FAIL or SKIP line per case; exits 1 if one
failed, 2 without a GPU.

The GPU machine has no tile-compile: the kernels are compiled ahead of
time, where it is, into a folder the launcher finds through
$TILE_CACHE_DIR (scripts/make_gpu_bundle.sh does this):

    check_jit_launch.py --prepare --kernels DIR   (compiles, launches nothing)
    check_jit_launch.py --kernels DIR             (on the GPU, from a GPU bundle)
"""

import argparse
import functools
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile import launcher  # noqa: E402
from tile.compile import load_module  # noqa: E402
from tile.language.extra import libdevice  # noqa: E402

EXAMPLE = load_module(os.path.join(ROOT, "examples", "pytorch_launch.py"))
ATTENTION = load_module(os.path.join(ROOT, "examples", "fused_attention.py"))
INLINE_ASM = load_module(os.path.join(ROOT, "examples", "inline_asm.py"))
DESCRIPTORS = load_module(os.path.join(ROOT, "examples", "descriptor_matmul.py"))
NARROW = load_module(os.path.join(ROOT, "examples", "narrow_accumulator.py"))
# fp16 products summed in fp32 and rounded once to fp16: the largest
# |c - reference| / (|reference| + 1) stays near 5e-4.
MATMUL_LIMIT = 2e-3
SOFTMAX_LIMIT = 1e-6
# Polynomial approximations in fp32, pow through exp2 and log2.
LIBDEVICE_LIMIT = 2e-5
# One rounding of the exact sum: half an ulp of fp32 and of bf16.
ADD_FP32_LIMIT = 2**-24
ADD_BF16_LIMIT = 2**-8
# fp16 inputs and outputs, fp32 sums: a few fp16 roundings.
ATTENTION_LIMIT = 4e-3
# fp32 sums of a few hundred terms in another order than float64's.
LAYER_NORM_LIMIT = 1e-4


def relative(result, reference):
    if result.device.type == "meta":   # --prepare: nothing ran
        return 0.0
    return ((result.double() - reference).abs() / (reference.abs() + 1)).max().item()


def add_case(n, dtype, limit):
    def case(device):
        x = torch.randn(n, device=device).to(dtype)
        y = torch.randn(n, device=device).to(dtype)
        return relative(EXAMPLE.add(x, y), x.double() + y.double()), limit
    return case


def softmax_case(rows, cols, strided=False, num_stages=1):
    def case(device):
        if strided:
            x = (torch.randn(rows, cols + 40, device=device) * 4)[:, 8:8 + cols]
        else:
            x = torch.randn(rows, cols, device=device) * 4
        return (relative(EXAMPLE.softmax(x, num_stages=num_stages),
                         torch.softmax(x.double(), dim=1)), SOFTMAX_LIMIT)
    return case


def matmul_case(m, n, k, transposed=False):
    def case(device):
        a = torch.randn(m, k, device=device).to(torch.float16)
        if transposed:
            b = torch.randn(n, k, device=device).to(torch.float16).t()
        else:
            b = torch.randn(k, n, device=device).to(torch.float16)
        return relative(EXAMPLE.matmul(a, b), a.double() @ b.double()), MATMUL_LIMIT
    return case


def descriptor_matmul_case(m, n, k):
    """examples/descriptor_matmul.py from kernel[grid](...) with host
    descriptors; A's rows padded to 16-byte multiples, K ragged."""
    def case(device):
        a = torch.randn(m, -(-k // 8) * 8, device=device).to(torch.float16)[:, :k]
        b = torch.randn(k, n, device=device).to(torch.float16)
        return relative(DESCRIPTORS.launch_matmul(a, b), a.double() @ b.double()), \
            MATMUL_LIMIT
    return case


def philox_word(seed, counter):
    """The first word of Philox 4x32-10 of (counter, 0, 0, 0) under seed, on
    Python ints: what tl.randint gives (test_random.py checks this against
    Random123's known answers)."""
    low32 = 0xFFFFFFFF
    k0, k1, c0, c1, c2, c3 = seed & low32, seed >> 32, counter, 0, 0, 0
    for _ in range(10):
        p0, p2 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p2 >> 32) ^ c1 ^ k0, p2 & low32, (p0 >> 32) ^ c3 ^ k1, p0 & low32
        k0, k1 = (k0 + 0x9E3779B9) & low32, (k1 + 0xBB67AE85) & low32
    return c0


def dropout_case(n, p, seed):
    """Tutorial 04: the kept elements exactly those whose tl.rand exceeds p
    (the GPU's Philox bit for bit the reference's), scaled by 1 / (1 - p)
    within the 2 ulp of fp32 '/' (div.full.f32, as Triton's): the error is
    the number of elements kept or dropped wrongly, or scaled beyond that."""
    def case(device):
        x = torch.randn(n, device=device)
        out = EXAMPLE.seeded_dropout(x, p, seed)
        if device == "meta":
            return 0.0, 0
        words = torch.tensor([philox_word(seed, i) for i in range(n)], dtype=torch.int64)
        signed = torch.where(words >= 2**31, words - 2**32, words)
        uniform = torch.where(signed < 0, -signed - 1, signed).float() * 4.6566127342e-10
        keep = uniform > p
        want = torch.where(keep, x.cpu().double() / (1 - p), torch.zeros((), dtype=torch.float64))
        got = out.cpu().double()
        wrong_mask = (got != 0) != keep
        beyond_2ulp = (got - want).abs() > 2 * torch.finfo(torch.float32).eps * want.abs()
        return float((wrong_mask | beyond_2ulp).sum()), 0
    return case


def side_stream_case(device):
    x = torch.randn(5000, device=device)
    y = torch.randn(5000, device=device)
    if device != "cuda":
        return relative(EXAMPLE.add(x, y), x.double() + y.double()), ADD_FP32_LIMIT
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        out = EXAMPLE.add(x, y)
    stream.synchronize()
    return relative(out, x.double() + y.double()), ADD_FP32_LIMIT


# The tutorial's vector add under @tile.autotune: the configs timed with
# CUDA events on the first call, the fastest kept for the key.
TUNED_ADD = tile.autotune(
    configs=[tile.Config({"BLOCK_SIZE": block}, num_warps=warps)
             for block, warps in ((256, 2), (1024, 4), (4096, 8))],
    key=["n_elements"])(EXAMPLE.add_kernel)


def autotuned_add_case(n):
    def case(device):
        x = torch.randn(n, device=device)
        y = torch.randn(n, device=device)
        out = torch.empty_like(x)

        def grid(meta):
            return (tile.cdiv(n, meta["BLOCK_SIZE"]),)
        if device == "meta":   # --prepare: every config, compiled
            TUNED_ADD.warmup(x, y, out, n, grid=grid)
            return 0.0, ADD_FP32_LIMIT
        TUNED_ADD[grid](x, y, out, n)
        if device == "cuda" and TUNED_ADD.configs_timings is None:
            raise RuntimeError("the configs were not timed")
        return relative(out, x.double() + y.double()), ADD_FP32_LIMIT
    return case


# Builtins made of others (tile/language/standard.py and tl.math's):
# argmax through tl.max's indices, softmax, clamp, umulhi and xor_sum (a
# tile.reduce xor), on ragged rows.
@tile.jit
def language_kernel(X, A, B, ARGMAX, SOFT, CLAMPED, HIGH, XOR, n_rows, n_cols,
                    ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(X + offs, mask=mask, other=float("-inf"))
    tl.store(ARGMAX + rows, tl.argmax(x, 1), mask=rows < n_rows)
    tl.store(SOFT + offs, tl.softmax(x, 1), mask=mask)
    tl.store(CLAMPED + offs, tl.clamp(x, -0.5, 0.5), mask=mask)
    a = tl.load(A + offs, mask=mask, other=0)
    b = tl.load(B + offs, mask=mask, other=0)
    tl.store(HIGH + offs, tl.umulhi(a, b), mask=mask)
    tl.store(XOR + rows, tl.xor_sum(a, 1), mask=rows < n_rows)


def language_case(n_rows, n_cols):
    """The softmax's relative error; a wrong argmax, clamp, umulhi or
    xor_sum element makes it infinite."""
    def case(device):
        x = torch.randn(n_rows, n_cols, device=device) * 3
        a, b = (torch.randint(-2**31, 2**31 - 1, (n_rows, n_cols), dtype=torch.int32,
                              device=device) for _ in range(2))
        argmax = torch.zeros(n_rows, dtype=torch.int32, device=device)
        soft, clamped = torch.zeros_like(x), torch.zeros_like(x)
        high = torch.zeros_like(a)
        xor = torch.zeros(n_rows, dtype=torch.int32, device=device)
        language_kernel[(tile.cdiv(n_rows, 4),)](x, a, b, argmax, soft, clamped, high, xor,
                                                 n_rows, n_cols, ROWS=4, COLS=128)
        if device == "meta":
            return 0.0, SOFTMAX_LIMIT
        low = 0xFFFFFFFF
        want_high = (((a.long() & low) * (b.long() & low)) >> 32).to(torch.int32)
        exact = (torch.equal(argmax, x.argmax(1).to(torch.int32))
                 and torch.equal(clamped, x.clamp(-0.5, 0.5))
                 and torch.equal(high, want_high)
                 and torch.equal(xor, functools.reduce(torch.bitwise_xor, a.unbind(1))))
        error = relative(soft, torch.softmax(x.double(), 1))
        return (error if exact else float("inf")), SOFTMAX_LIMIT
    return case


# tl.erf and libdevice's functions (tile/language/extra/libdevice.py): the
# GPU's polynomial approximations and compositions against float64.
@tile.jit
def libdevice_kernel(X, Y, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(OUT + 0 * n + offs, tl.erf(x), mask=mask)
    tl.store(OUT + 1 * n + offs, libdevice.erfc(x), mask=mask)
    tl.store(OUT + 2 * n + offs, libdevice.log1p(x), mask=mask)
    tl.store(OUT + 3 * n + offs, libdevice.expm1(x), mask=mask)
    tl.store(OUT + 4 * n + offs, libdevice.atan2(y, x), mask=mask)
    tl.store(OUT + 5 * n + offs, libdevice.asin(x), mask=mask)
    tl.store(OUT + 6 * n + offs, libdevice.acos(x), mask=mask)
    tl.store(OUT + 7 * n + offs, libdevice.cbrt(y), mask=mask)
    tl.store(OUT + 8 * n + offs, libdevice.sinh(x), mask=mask)
    tl.store(OUT + 9 * n + offs, libdevice.pow(y, x * 4.0), mask=mask)


LIBDEVICE_NAMES = ("erf", "erfc", "log1p", "expm1", "atan2", "asin", "acos", "cbrt", "sinh",
                  "pow")


def libdevice_case(n):
    """The largest error relative to max(|reference|, 1e-3) over the
    functions."""
    def case(device):
        x = torch.rand(n, device=device) * 1.98 - 0.99
        y = torch.rand(n, device=device) * 8 - 4
        out = torch.zeros(10, n, device=device)
        libdevice_kernel[(tile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        if device == "meta":
            return 0.0, LIBDEVICE_LIMIT
        x64, y64 = x.double(), y.double()
        want = torch.stack([torch.erf(x64), torch.erfc(x64), torch.log1p(x64),
                            torch.expm1(x64), torch.atan2(y64, x64), torch.asin(x64),
                            torch.acos(x64), torch.sign(y64) * y64.abs() ** (1 / 3),
                            torch.sinh(x64), torch.pow(y64, x64 * 4.0)])
        finite = torch.isfinite(want)          # pow of a negative base: NaN
        if not torch.equal(finite, torch.isfinite(out)):
            return float("inf"), LIBDEVICE_LIMIT
        error = ((out.double() - want).abs() / want.abs().clamp(min=1e-3)).nan_to_num(0.0)
        per_function = error.max(1).values.tolist()
        print("  libdevice errors: " + ", ".join(
            f"{name} {e:.1e}" for name, e in zip(LIBDEVICE_NAMES, per_function)))
        return max(per_function), LIBDEVICE_LIMIT
    return case


# tl.atomic_max, _min, _and, _or, _xor, _xchg (tile.atomic_rmw) from many
# programs on few addresses: each target's final value is order-free (for
# xchg: the old values and the final one are the initial and the written
# ones, rearranged).
@tile.jit
def atomics_kernel(F, I, L, X, FV, IV, LV, OLD, n, n_targets, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    t = offs % n_targets
    fv = tl.load(FV + offs, mask=mask)
    iv = tl.load(IV + offs, mask=mask)
    lv = tl.load(LV + offs, mask=mask)
    tl.atomic_max(F + t, fv, mask=mask)
    tl.atomic_min(F + n_targets + t, fv, mask=mask)
    tl.atomic_max(I + t, iv, mask=mask)
    tl.atomic_and(I + n_targets + t, iv, mask=mask)
    tl.atomic_or(L + t, lv, mask=mask)
    tl.atomic_xor(L + n_targets + t, lv, mask=mask)
    tl.atomic_min(L + 2 * n_targets + t, lv, mask=mask)
    tl.store(OLD + offs, tl.atomic_xchg(X + t, fv, mask=mask), mask=mask)


def atomics_case(n, n_targets):
    """0 when every final value (and xchg's rearrangement) is right, else
    infinite."""
    def case(device):
        f_values = torch.randn(n, device=device) * 100
        i_values = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=device)
        l_values = torch.randint(-2**62, 2**62, (n,), dtype=torch.int64, device=device)
        f = torch.randn(2 * n_targets, device=device)
        i = torch.randint(-2**31, 2**31 - 1, (2 * n_targets,), dtype=torch.int32, device=device)
        l = torch.randint(-2**62, 2**62, (3 * n_targets,), dtype=torch.int64, device=device)
        x = torch.randn(n_targets, device=device)
        start = [t.clone() for t in (f, i, l, x)]
        old = torch.zeros(n, device=device)
        atomics_kernel[(tile.cdiv(n, 256),)](f, i, l, x, f_values, i_values, l_values, old, n,
                                             n_targets, BLOCK=256)
        if device == "meta":
            return 0.0, 0.0
        f0, i0, l0, x0 = start
        ok = True
        for t in range(n_targets):
            group = slice(t, n, n_targets)
            ok &= f[t] == torch.maximum(f0[t], f_values[group].max())
            ok &= f[n_targets + t] == torch.minimum(f0[n_targets + t], f_values[group].min())
            ok &= i[t] == torch.maximum(i0[t], i_values[group].max())
            ok &= i[n_targets + t] == functools.reduce(
                torch.bitwise_and, i_values[group].unbind(), i0[n_targets + t])
            ok &= l[t] == functools.reduce(torch.bitwise_or, l_values[group].unbind(), l0[t])
            ok &= l[n_targets + t] == functools.reduce(
                torch.bitwise_xor, l_values[group].unbind(), l0[n_targets + t])
            ok &= l[2 * n_targets + t] == torch.minimum(l0[2 * n_targets + t],
                                                         l_values[group].min())
            seen = torch.cat([old[group], x[t:t + 1]]).sort().values
            ok &= torch.equal(seen, torch.cat([f_values[group], x0[t:t + 1]]).sort().values)
        return (0.0 if bool(ok) else float("inf")), 0.0
    return case


# desc.atomic_add from many programs onto shared blocks of a ragged tensor:
# products (a wgmma accumulator, each warp a box: the TMA adds it, a warp
# at a time) and loaded blocks (a blocked layout: red.global per element).
@tile.jit
def block_updates_kernel(A, B, X, OUT, OUT2, M, N, STEPS, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    out = tl.make_tensor_descriptor(OUT, shape=[M, N], strides=[N, 1],
                                    block_shape=[BLOCK_M, BLOCK_N])
    out2 = tl.make_tensor_descriptor(OUT2, shape=[M, N], strides=[N, 1],
                                     block_shape=[BLOCK_M, BLOCK_N])
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    ks = tl.arange(0, BLOCK_K)
    b = tl.load(B + ks[:, None] * BLOCK_N + cols)
    for step in range(STEPS):
        block = pid * STEPS + step
        a = tl.load(A + (block * BLOCK_M + rows) * BLOCK_K + ks[None, :])
        corner = [(step % 3) * BLOCK_M, (pid % 2) * BLOCK_N]
        out.atomic_add(corner, tl.dot(a, b))
        out2.atomic_add(corner, tl.load(X + (block * BLOCK_M + rows) * BLOCK_N + cols))


def block_updates_case(m, n, programs, steps):
    """The larger relative error of the two sums against float64."""
    def case(device):
        bm, bn, bk = 64, 64, 32
        a = torch.randn(programs * steps * bm, bk, device=device).half()
        b = torch.randn(bk, bn, device=device).half()
        x = torch.randn(programs * steps * bm, bn, device=device)
        out = torch.randn(m, n, device=device)
        out2 = torch.randn(m, n, device=device)
        start, start2 = out.double(), out2.double()
        block_updates_kernel[(programs,)](a, b, x, out, out2, m, n, steps,
                                          BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
        if device == "meta":
            return 0.0, 0.0
        products = (a.double() @ b.double()).view(programs, steps, bm, bn)
        blocks = x.double().view(programs, steps, bm, bn)
        for p in range(programs):
            for s in range(steps):
                r0, c0 = (s % 3) * bm, (p % 2) * bn
                rows, cols = min(bm, m - r0), min(bn, n - c0)
                start[r0:r0 + rows, c0:c0 + cols] += products[p, s, :rows, :cols]
                start2[r0:r0 + rows, c0:c0 + cols] += blocks[p, s, :rows, :cols]
        return max(relative(out, start), relative(out2, start2)), LAYER_NORM_LIMIT
    return case


# tl.reshape, tl.ravel, tl.join, tl.split, tl.interleave, tl.cat: elements
# that stay in their threads (join, split) and ones that move through shared
# memory (a reshape to the transposed shape, cat along rows).
@tile.jit
def shape_ops_kernel(X, Y, FLAT, VIEW, HALVES, MIXED, ROWS, COLS,
                     M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(X + rows * N + cols)
    y = tl.load(Y + rows * N + cols)
    tl.store(FLAT + tl.arange(0, M * N), tl.ravel(x))
    tl.store(VIEW + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], x.reshape(N, M))
    a, b = tl.join(x, y).split()
    tl.store(HALVES + rows * N + cols, a - b)
    wide = tl.arange(0, 2 * N)[None, :]
    tl.store(MIXED + rows * (2 * N) + wide, tl.interleave(x, y))
    tl.store(ROWS + tl.arange(0, 2 * M)[:, None] * N + cols, tl.cat(x, y))
    tl.store(COLS + rows * (2 * N) + wide, tl.cat(x, y, dim=1))


def shape_ops_case(m, n):
    """0 when every output is its torch counterpart exactly, else infinite."""
    def case(device):
        x = torch.randn(m, n, device=device)
        y = torch.randn(m, n, device=device)
        outs = [torch.empty(s, device=device) for s in
                [(m * n,), (n, m), (m, n), (m, 2 * n), (2 * m, n), (m, 2 * n)]]
        shape_ops_kernel[(1,)](x, y, *outs, M=m, N=n)
        if device == "meta":
            return 0.0, 0.0
        expected = [x.reshape(-1), x.reshape(n, m), x - y,
                    torch.stack([x, y], -1).reshape(m, 2 * n), torch.cat([x, y], 0),
                    torch.cat([x, y], 1)]
        ok = all(torch.equal(o, e) for o, e in zip(outs, expected))
        return (0.0 if ok else float("inf")), 0.0
    return case


# tl.sort, tl.topk, tl.flip (standard.py, on reshape and xor_sum) on the GPU.
@tile.jit
def sort_kernel(X, ASC, DESC, FLIP, TOP, ROWS: tl.constexpr, N: tl.constexpr,
                K: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(ASC + offs, tl.sort(x))
    tl.store(DESC + offs, tl.sort(x, descending=True))
    tl.store(FLIP + offs, tl.flip(x, 0))
    tl.store(TOP + tl.arange(0, ROWS)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K))


def sort_case(rows, n, k, dtype):
    """0 when every output is torch's exactly, else infinite."""
    def case(device):
        x = (torch.randint(-50, 50, (rows, n), device=device) / 8).to(dtype)
        outs = [torch.empty(rows, n, device=device, dtype=dtype) for _ in range(3)]
        top = torch.empty(rows, k, device=device, dtype=dtype)
        sort_kernel[(1,)](x, *outs, top, ROWS=rows, N=n, K=k)
        if device == "meta":
            return 0.0, 0.0
        expected = [x.sort(-1).values, x.sort(-1, descending=True).values, x.flip(0),
                    x.topk(k, -1).values]
        ok = all(torch.equal(o, e) for o, e in zip(outs + [top], expected))
        return (0.0 if ok else float("inf")), 0.0
    return case


# tl.cumsum, tl.associative_scan and tl.reduce with a combine function,
# tl.gather and tl.histogram (standard.py) on the GPU; small integers in fp32
# sum exactly in any order.
@tile.jit
def _last_nonzero(a, b):
    return tl.where(b == 0, a, b)


@tile.jit
def _larger(a, b):
    return tl.maximum(a, b)


@tile.jit
def _first_largest(value_a, index_a, value_b, index_b):
    take_b = (value_b > value_a) | ((value_b == value_a) & (index_b < index_a))
    return tl.where(take_b, value_b, value_a), tl.where(take_b, index_b, index_a)


@tile.jit
def scan_kernel(X, CUM0, CUM1, REV, FILL, COLMAX, TOTAL, GATHERED, COUNTS, ARGMAX,
                ROWS: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(CUM0 + offs, tl.cumsum(x, 0))
    tl.store(CUM1 + offs, tl.cumsum(x, 1))
    tl.store(REV + offs, tl.cumsum(x, 1, reverse=True))
    tl.store(FILL + offs, tl.associative_scan(x, 1, _last_nonzero))
    tl.store(COLMAX + tl.arange(0, N), tl.reduce(x, 0, _larger))
    tl.store(TOTAL, tl.reduce(x, None, _larger))
    # Each row's elements in reverse order, gathered; a histogram of x + 3.
    tl.store(GATHERED + offs, tl.gather(x, N - 1 - offs % N, 1))
    tl.store(COUNTS + tl.arange(0, 8), tl.histogram(tl.ravel(x.to(tl.int32) + 3), 8))
    # A tuple reduction: each row's first largest element's index.
    index = tl.broadcast_to(tl.arange(0, N)[None, :], ROWS, N)
    _, at = tl.reduce((x, index), 1, _first_largest)
    tl.store(ARGMAX + tl.arange(0, ROWS), at)


def scan_case(rows, n):
    """0 when every output is the sequential result exactly, else infinite."""
    def case(device):
        x = torch.randint(-3, 4, (rows, n), device=device).float()
        outs = [torch.empty(rows, n, device=device) for _ in range(4)]
        colmax, total = torch.empty(n, device=device), torch.empty(1, device=device)
        gathered = torch.empty(rows, n, device=device)
        counts = torch.empty(8, dtype=torch.int32, device=device)
        argmax = torch.empty(rows, dtype=torch.int32, device=device)
        scan_kernel[(1,)](x, *outs, colmax, total, gathered, counts, argmax, ROWS=rows, N=n)
        if device == "meta":
            return 0.0, 0.0
        fill = x.clone()
        for i in range(1, n):
            fill[:, i] = torch.where(x[:, i] == 0, fill[:, i - 1], x[:, i])
        expected = [x.cumsum(0), x.cumsum(1), x.flip(1).cumsum(1).flip(1), fill,
                    x.max(0).values, x.max().reshape(1), x.flip(1),
                    torch.bincount((x.int() + 3).flatten(), minlength=8).int(),
                    x.argmax(1).int()]
        got = outs + [colmax, total, gathered, counts, argmax]
        ok = all(torch.equal(o, e) for o, e in zip(got, expected))
        return (0.0 if ok else float("inf")), 0.0
    return case


# Message passing between programs: program 0 writes a block of data, then
# sets a flag (tl.atomic_store, release); the others wait for the flag
# (tl.atomic_load, acquire) and copy the data. Every copy must be the data:
# the release orders all of program 0's writes before the flag, the acquire
# all of a reader's reads after it. 8 programs, one an SM at most: all run
# at once.
@tile.jit
def message_kernel(FLAG, DATA, COPIES, N: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, N)
    if pid == 0:
        tl.store(DATA + offs, offs * 3 + 1)
        tl.atomic_store(FLAG, 1)
    else:
        while tl.atomic_load(FLAG) == 0:
            pass
        tl.store(COPIES + pid * N + offs, tl.load(DATA + offs))


def message_case(programs, n):
    """0 when every reader copied the data, else infinite."""
    def case(device):
        flag = torch.zeros(1, dtype=torch.int32, device=device)
        data = torch.zeros(n, dtype=torch.int32, device=device)
        copies = torch.full((programs, n), -1, dtype=torch.int32, device=device)
        message_kernel[(programs,)](flag, data, copies, N=n)
        if device == "meta":
            return 0.0, 0.0
        expected = torch.arange(n, device=device, dtype=torch.int32) * 3 + 1
        ok = bool((copies[1:] == expected).all()) and int(flag.item()) == 1
        return (0.0 if ok else float("inf")), 0.0
    return case


# tl.uint32: division, remainder, shifts, comparisons, extremes and sums as
# unsigned numbers on the GPU.
@tile.jit
def unsigned_kernel(X, Y, OUT, LARGEST, TOTAL, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    tl.store(OUT + offs * 4, x // y)
    tl.store(OUT + offs * 4 + 1, x % y)
    tl.store(OUT + offs * 4 + 2, (x >> 5) + tl.maximum(x, y))
    tl.store(OUT + offs * 4 + 3, (x < y).to(tl.uint32))
    tl.store(LARGEST, tl.max(x, 0))
    tl.atomic_add(TOTAL + offs * 0, x)


def unsigned_case(n):
    """0 when every result is numpy's on the same uint32 values, else
    infinite."""
    def case(device):
        gen = np.random.default_rng(8)
        xs = gen.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        ys = gen.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
        xs[0] = 0xFFFFFFFF

        def u32(values):
            return torch.from_numpy(np.asarray(values, np.uint32).view(np.int32).copy()) \
                .to(device).view(torch.uint32)
        out, largest, total = u32(np.zeros(4 * n)), u32([0]), u32([0])
        unsigned_kernel[(1,)](u32(xs), u32(ys), out, largest, total, N=n)
        if device == "meta":
            return 0.0, 0.0

        def host(t):
            return t.view(torch.int32).cpu().numpy().view(np.uint32)
        with np.errstate(over="ignore"):
            want = np.stack([xs // ys, xs % ys, (xs >> 5) + np.maximum(xs, ys),
                             (xs < ys).astype(np.uint32)], 1).reshape(-1)
        ok = (host(out) == want).all() and host(largest)[0] == xs.max() and \
            host(total)[0] == xs.astype(np.uint64).sum() % 2**32
        return (0.0 if ok else float("inf")), 0.0
    return case


# tl.inline_asm_elementwise (examples/inline_asm.py): a rotate of each
# int32, bytes to int32 and float32 four a run, and a number broadcast
# among the arguments of an asm with side effects.
def inline_asm_case(n):
    """0 when every result is numpy's, else infinite."""
    def case(device):
        gen = np.random.default_rng(9)
        xs = gen.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        bs = gen.integers(0, 256, n, dtype=np.int64).astype(np.uint8)
        y, z, w = INLINE_ASM.run(torch.from_numpy(xs).to(device),
                                 torch.from_numpy(bs).to(device))
        if device == "meta":
            return 0.0, 0.0
        bits = xs.view(np.uint32)
        rotated = ((bits << np.uint32(8)) | (bits >> np.uint32(24))).view(np.int32)
        with np.errstate(over="ignore"):
            want = rotated + np.int32(7)
        ok = (y.cpu().numpy() == want).all() and (z.cpu().numpy() == bs).all() and \
            (w.cpu().numpy() == bs.astype(np.float32)).all()
        return (0.0 if ok else float("inf")), 0.0
    return case


# Pointers from int64 addresses, as tutorial 08's grouped GEMM reads its
# operands: a table of CUDA addresses (data_ptr()) loaded and cast to
# pointers; and a pointer's own address, 2 bytes an fp16 element.
@tile.jit
def address_table_kernel(TABLE, SIZES, OUT, STEP, N: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, N)
    source = tl.load(TABLE + pid).to(tl.pointer_type(tl.float16))
    mask = offs < tl.load(SIZES + pid)
    values = tl.load(source + offs, mask=mask, other=0.0)
    tl.store(OUT + pid * N + offs, values, mask=mask)
    spacing = (OUT + offs).to(tl.int64) - OUT.to(tl.int64)
    tl.store(STEP + pid * N + offs, spacing)


def address_table_case(groups, n):
    """0 when every group's row was read through its address, else
    infinite."""
    def case(device):
        sizes = [n - 3 * g for g in range(groups)]
        sources = [torch.randn(size, device=device).half() for size in sizes]
        table = torch.tensor([t.data_ptr() for t in sources], dtype=torch.int64,
                             device=device)
        lengths = torch.tensor(sizes, dtype=torch.int32, device=device)
        out = torch.zeros(groups, n, device=device).half()
        step = torch.zeros(groups, n, dtype=torch.int64, device=device)
        address_table_kernel[(groups,)](table, lengths, out, step, N=n)
        if device == "meta":
            return 0.0, 0.0
        ok = all(torch.equal(out[g, :size], sources[g]) and not out[g, size:].any()
                 for g, size in enumerate(sizes))
        ok = ok and bool((step == torch.arange(n, device=device) * 2).all())
        return (0.0 if ok else float("inf")), 0.0
    return case


# Liger's cross entropy, as its kernels are written: a row whose label is
# ignore_index zeroes its gradient and returns early (a return under a
# run-time if); the others write softmax - onehot, divided by the count.
@tile.jit
def cross_entropy_kernel(X, X_STRIDE, Y, LOSS, n_cols, n_valid, ignore_index,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    X += row * X_STRIDE
    y = tl.load(Y + row)
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK):
            cols = i + tl.arange(0, BLOCK)
            tl.store(X + cols, 0.0, mask=cols < n_cols)
        return
    m = float("-inf")
    d = 0.0
    x_y = tl.load(X + y)
    for i in range(0, n_cols, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        block = tl.load(X + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(block))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(block - m_new))
        m = m_new
    for i in range(0, n_cols, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        block = tl.load(X + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(X + cols, tl.exp(block - m) / d / n_valid, mask=cols < n_cols)
    tl.debug_barrier()
    tl.store(LOSS + row, (m + tl.log(d) - x_y) / n_valid)
    tl.store(X + y, tl.load(X + y) - 1 / n_valid)


def cross_entropy_case(rows, cols):
    """The largest error of the loss and the gradient against float64
    autograd, a third of the rows ignored."""
    def case(device):
        gen = torch.Generator().manual_seed(rows)
        logits = torch.randn(rows, cols, generator=gen) * 3
        labels = torch.randint(0, cols, (rows,), generator=gen)
        labels[::3] = -100
        n_valid = int((labels != -100).sum())
        grad = logits.to(device, copy=True)   # the kernel writes the gradient over it
        loss = torch.zeros(rows, device=device)
        cross_entropy_kernel[(rows,)](grad, grad.stride(0), labels.to(device), loss, cols,
                                      n_valid, -100, BLOCK=256)
        if device == "meta":
            return 0.0, 0.0
        reference = logits.double().requires_grad_()
        total = torch.nn.functional.cross_entropy(reference, labels, ignore_index=-100,
                                                  reduction="sum") / n_valid
        total.backward()
        return max((loss.double().sum().cpu() - total.detach()).abs().item(),
                   (grad.double().cpu() - reference.grad).abs().max().item()), 1e-5
    return case


def matmul_fp16_out_case(m, n, k):
    """examples/narrow_accumulator.py: the largest difference from float64
    steps rounded to fp16 as the kernel rounds them, in units of one
    rounding's flip at each step (an fp32 sum on the tensor cores may round
    a step the other way, which the later steps carry on)."""
    def case(device):
        block = 64
        a = torch.randn(m, k, device=device).half()
        b = torch.randn(k, n, device=device).half()
        c = NARROW.launch_matmul(a, b, block=block)
        if device == "meta":
            return 0.0, 0.0
        stepped = torch.zeros(m, n, dtype=torch.float16)
        flips = torch.zeros(m, n, dtype=torch.float64)
        for k0 in range(0, k, block):
            step = a[:, k0:k0 + block].double().cpu() @ b[k0:k0 + block].double().cpu()
            stepped = (stepped.double() + step).half()
            flips += (stepped.double().abs() * 2**-10).clamp(min=2**-24)
        return ((c.double().cpu() - stepped.double()).abs() / flips).max().item(), 1.0
    return case


# A scalar atomic whose old value the whole program uses (thread 0 updates,
# shared memory hands the value on): one ticket a program, a permutation.
@tile.jit
def ticket_kernel(COUNTER, TICKETS, BLOCK: tl.constexpr):
    ticket = tl.atomic_add(COUNTER, 1)
    # Every thread stores the ticket it saw: all must agree.
    tl.store(TICKETS + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK),
             tl.full([BLOCK], ticket, tl.int32))


def tickets_case(n):
    """0 when the programs' tickets are 0..n-1, each seen by all threads."""
    def case(device):
        counter = torch.zeros(1, dtype=torch.int32, device=device)
        tickets = torch.full((n, 256), -1, dtype=torch.int32, device=device)
        ticket_kernel[(n,)](counter, tickets, BLOCK=256)
        if device == "meta":
            return 0.0, 0.0
        agree = bool((tickets == tickets[:, :1]).all())
        ok = agree and sorted(tickets[:, 0].tolist()) == list(range(n))
        return (0.0 if ok else float("inf")), 0.0
    return case


def persistent_matmul_case(m, n, k):
    """Tutorial 09's persistent matmul: one program an SM (NUM_SMS, a
    constexpr, fixed at the H100's and H200's 132 so that the kernel
    compiled ahead of time is the one launched)."""
    def case(device):
        a = torch.randn(m, k, device=device).to(torch.float16)
        b = torch.randn(k, n, device=device).to(torch.float16)
        c = EXAMPLE.matmul_persistent(a, b, num_sms=132)
        return relative(c, a.double() @ b.double()), MATMUL_LIMIT
    return case


def fused_attention_case(shape, causal):
    """Tutorial 06's fused attention, forward and backward, fp16, against
    float64 (the error relative to the reference's magnitude + 1)."""
    def case(device):
        q, k, v = (torch.randn(shape, device=device, dtype=torch.float16, requires_grad=True)
                   for _ in range(3))
        do = torch.randn(shape, device=device, dtype=torch.float16)
        out = ATTENTION.attention(q, k, v, causal, 0.125)
        out.backward(do)
        if device == "meta":
            return 0.0, 0.0
        q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(q64, k64, v64, is_causal=causal,
                                                               scale=0.125)
        ref.backward(do.double())
        error = max(relative(out, ref.detach()), relative(q.grad, q64.grad),
                    relative(k.grad, k64.grad), relative(v.grad, v64.grad))
        return error, ATTENTION_LIMIT
    return case


def layer_norm_case(rows, cols, group_size_m):
    """Tutorial 05's layer norm, forward and backward (dW and dB summed
    under locks by contending programs), against float64 autograd."""
    def case(device):
        x = torch.randn(rows, cols, device=device)
        w, b = torch.randn(cols, device=device), torch.randn(cols, device=device)
        dy = torch.randn(rows, cols, device=device)
        y, mean, rstd = EXAMPLE.layer_norm(x, w, b)
        dx, dw, db = EXAMPLE.layer_norm_backward(dy, x, w, mean, rstd, group_size_m)
        if device == "meta":
            return 0.0, 0.0
        x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
        y64 = torch.nn.functional.layer_norm(x64, (cols,), w64, b64, eps=1e-5)
        y64.backward(dy.double())
        error = max(relative(y, y64.detach()), relative(dx, x64.grad), relative(dw, w64.grad),
                    relative(db, b64.grad))
        return error, LAYER_NORM_LIMIT
    return case


@tile.jit
def swap_kernel(F, L, CMP_F, CMP_L, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # One compare-and-swap an element: where the comparison holds the
    # element becomes its negation, and the old value is written back
    # beside it.
    f_cmp = tl.load(CMP_F + offs, mask=mask, other=0.0)
    l_cmp = tl.load(CMP_L + offs, mask=mask, other=0)
    where = tl.where(mask, offs, n)
    old_f = tl.atomic_cas(F + where, f_cmp, -f_cmp - 1.0, sem="relaxed")
    old_l = tl.atomic_cas(L + where, l_cmp, -l_cmp - 1, scope="sys")
    tl.store(CMP_F + offs, old_f, mask=mask)
    tl.store(CMP_L + offs, old_l, mask=mask)


def compare_and_swap_case(n):
    """0 when every fp32 and int64 element swapped exactly where its
    comparison held (fp32 bit for bit: -0.0 is not 0.0)."""
    def case(device):
        f = torch.randint(0, 3, (n + 1,), device=device).float()
        f[: n // 10] = 0.0
        cmp_f = torch.where(torch.rand(n, device=device) < 0.5, f[:n], f[:n] + 1)
        cmp_f[: n // 20] = -0.0
        big = torch.randint(-2**40, 2**40, (n + 1,), device=device)
        cmp_l = torch.where(torch.rand(n, device=device) < 0.5, big[:n], big[:n] + 1)
        f0, l0, cf0, cl0 = f.clone(), big.clone(), cmp_f.clone(), cmp_l.clone()
        swap_kernel[(tile.cdiv(n, 256),)](f, big, cmp_f, cmp_l, n, BLOCK=256)
        if device == "meta":
            return 0.0, 0.0
        hit_f = f0[:n].view(torch.int32) == cf0.view(torch.int32)
        hit_l = l0[:n] == cl0
        ok = (torch.equal(f[:n], torch.where(hit_f, -cf0 - 1.0, f0[:n]))
              and torch.equal(big[:n], torch.where(hit_l, -cl0 - 1, l0[:n]))
              and torch.equal(cmp_f, f0[:n]) and torch.equal(cmp_l, l0[:n])
              and bool(hit_f.any()) and not bool(hit_f.all()))
        return (0.0 if ok else float("inf")), 0.0
    return case


@tile.jit
def print_kernel(X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=-1.0)
    tl.device_print("x=", x)
    print("n", n)


def device_print_case(n, block):
    """0 when the lines vprintf printed (captured from file descriptor 1)
    are the ones expected, one an element and one a program, in any
    order."""
    def case(device):
        x = torch.arange(n, dtype=torch.float32, device=device) / 4
        programs = tile.cdiv(n, block)
        if device == "meta":
            print_kernel[(programs,)](x, n, BLOCK=block)
            return 0.0, 0.0
        sys.stdout.flush()
        saved = os.dup(1)
        with tempfile.TemporaryFile(mode="w+") as captured:
            os.dup2(captured.fileno(), 1)
            try:
                print_kernel[(programs,)](x, n, BLOCK=block)
                torch.cuda.synchronize()
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            captured.seek(0)
            lines = sorted(captured.read().splitlines())
        expected = []
        for p in range(programs):
            for i in range(block):
                value = (p * block + i) / 4 if p * block + i < n else -1.0
                expected.append(f"pid ({p}, 0, 0) idx ({i}) x={value:.9g}")
            expected.append(f"pid ({p}, 0, 0) n {n}")
        return (0.0 if lines == sorted(expected) else float("inf")), 0.0
    return case


@tile.jit
def assert_kernel(X, n, limit, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.device_assert(x < limit, "x under the limit", mask=offs < n)


def launch_assert(device, limit):
    """assert_kernel over 0, 1, ..., 299: holds when limit > 299."""
    x = torch.arange(300, dtype=torch.float32, device=device)
    assert_kernel[(tile.cdiv(300, 128),)](x, 300, limit, BLOCK=128)
    if device == "cuda":
        torch.cuda.synchronize()


def device_assert_case(device):
    """0 when an assertion that holds lets the kernel run, and one that
    fails (in a child process: __assertfail leaves the CUDA context
    unusable) stops it with an error, its message on the child's output."""
    launch_assert(device, 1000.0)
    if device == "meta":
        return 0.0, 0.0
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--failing-assert"],
                           capture_output=True, text=True)
    ok = child.returncode != 0 and "x under the limit" in child.stdout + child.stderr
    if not ok:
        print(f"  the child's exit status {child.returncode}, its output:\n"
              f"{child.stdout}{child.stderr}")
    return (0.0 if ok else float("inf")), 0.0


CASES = [
    ("seeded dropout n=3000 p=0.3 (Philox, bit for bit)", dropout_case(3000, 0.3, 2024)),
    ("add fp32 n=1 (the constant 1)", add_case(1, torch.float32, ADD_FP32_LIMIT)),
    ("add fp32 n=1000", add_case(1000, torch.float32, ADD_FP32_LIMIT)),
    ("add fp32 n=98765", add_case(98765, torch.float32, ADD_FP32_LIMIT)),
    ("add bf16 n=4097", add_case(4097, torch.bfloat16, ADD_BF16_LIMIT)),
    ("add fp32 n=5000 on a side stream", side_stream_case),
    ("add fp32 n=98765, autotuned (3 configs timed)", autotuned_add_case(98765)),
    ("softmax fp32 37x1000", softmax_case(37, 1000)),
    ("softmax fp32 1823x781", softmax_case(1823, 781)),
    ("softmax fp32 4x17", softmax_case(4, 17)),
    # 1008 columns (a multiple of 16, short of the 1024-wide block), the
    # loop's own two stages (tl.range's num_stages): each program copies its
    # next row ahead while it computes this one, the masked tail refilled
    # with -inf.
    ("softmax fp32 1000x1008, rows copied ahead", softmax_case(1000, 1008, num_stages=2)),
    ("softmax fp32 300x100, strided rows", softmax_case(300, 100, strided=True)),
    ("matmul fp16 7x9x17", matmul_case(7, 9, 17)),
    ("matmul fp16 100x70x90", matmul_case(100, 70, 90)),
    ("matmul fp16 129x257x65", matmul_case(129, 257, 65)),
    ("matmul fp16 1000x1001x999", matmul_case(1000, 1001, 999)),
    ("matmul fp16 200x72x136, B transposed", matmul_case(200, 72, 136, transposed=True)),
    ("matmul fp16 100x40x70, host tensor descriptors",
     descriptor_matmul_case(100, 40, 70)),
    ("matmul fp16 300x136x250, host tensor descriptors",
     descriptor_matmul_case(300, 136, 250)),
    # Sizes that are multiples of 16: 16-byte loads of the loop's pointers,
    # copied ahead with cp.async (tilegpu-pipeline).
    ("matmul fp16 256x512x320, cp.async", matmul_case(256, 512, 320)),
    ("matmul fp16 80x48x2064, cp.async", matmul_case(80, 48, 2064)),
    ("argmax, softmax, clamp, umulhi, xor_sum 37x100", language_case(37, 100)),
    ("erf and libdevice n=5000", libdevice_case(5000)),
    ("atomic max, min, and, or, xor, xchg n=10000 on 7 addresses", atomics_case(10000, 7)),
    ("scalar atomic_add tickets, 5000 programs", tickets_case(5000)),
    ("uint32 division, remainder, shifts, max, compare, atomic add n=256",
     unsigned_case(256)),
    ("inline_asm_elementwise: rotate, bytes to int32 and fp32 (pack 4), n=1000",
     inline_asm_case(1000)),
    ("cross entropy, Liger's kernel: early return on ignored rows, 37x1000",
     cross_entropy_case(37, 1000)),
    ("matmul fp16 out_dtype=fp16 100x70x200", matmul_fp16_out_case(100, 70, 200)),
    ("pointers from a table of int64 addresses, 5 groups (tutorial 08's reads)",
     address_table_case(5, 128)),
    ("atomic_store release, atomic_load acquire: a flag between 8 programs",
     message_case(8, 1024)),
    ("desc.atomic_add fp32 150x112, 9 programs x 6 steps (TMA and red.global)",
     block_updates_case(150, 112, 9, 6)),
    ("reshape, ravel, join, split, interleave, cat fp32 64x32", shape_ops_case(64, 32)),
    ("sort, topk 8, flip fp32 16x128 (ties)", sort_case(16, 128, 8, torch.float32)),
    ("sort, topk 4, flip fp16 8x32 (ties)", sort_case(8, 32, 4, torch.float16)),
    ("cumsum, associative_scan, reduce (argmax of a tuple), gather, histogram fp32 32x64",
     scan_case(32, 64)),
    ("atomic_cas fp32 (bits) and int64 n=10000", compare_and_swap_case(10000)),
    ("persistent matmul fp16 1000x1001x999", persistent_matmul_case(1000, 1001, 999)),
    ("persistent matmul fp16 129x257x65", persistent_matmul_case(129, 257, 65)),
    ("fused attention fwd+bwd fp16 2x3x1000x64", fused_attention_case((2, 3, 1000, 64), False)),
    ("fused attention fwd+bwd fp16 2x3x1000x64, causal",
     fused_attention_case((2, 3, 1000, 64), True)),
    ("fused attention fwd+bwd fp16 1x2x333x128, causal",
     fused_attention_case((1, 2, 333, 128), True)),
    ("tl.device_print and print, 3 programs of 128 (vprintf's lines)",
     device_print_case(300, 128)),
    ("tl.device_assert holding, then failing in a child process", device_assert_case),
    ("layer norm fwd+bwd fp32 4000x777, locks of 16 groups", layer_norm_case(4000, 777, 16)),
    ("layer norm fwd+bwd fp32 3x5000, locks of 16 groups", layer_norm_case(3, 5000, 16)),
    # 1024 columns (a multiple of 16), the sum of the groups' partials in
    # two steps, the second masked.
    ("layer norm fwd+bwd fp32 1000x1024, locks of 40 groups", layer_norm_case(1000, 1024, 40)),
]
# CUDA tensors on the interpreter (copied to the CPU and back).
INTERPRETED = [
    ("TILE_INTERPRET=1: add fp32 n=1000", add_case(1000, torch.float32, ADD_FP32_LIMIT)),
    ("TILE_INTERPRET=1: matmul fp16 33x65x17", matmul_case(33, 65, 17)),
]


def prepare():
    """Compiles every case's kernels for the GPU (meta tensors: aligned as
    CUDA's are) and for the interpreter (the interpreted cases, run on CPU
    tensors), launching nothing on a GPU."""
    real_run = launcher.run
    launcher.run = lambda fn, grid, args, kwargs: launcher.warmup(fn, args, kwargs, grid)
    try:
        for name, case in CASES:
            case("meta")
            print(f"compiled: {name}")
    finally:
        launcher.run = real_run
    for name, case in INTERPRETED:
        error, limit = case("cpu")
        print(f"compiled and ran on the CPU: {name}: {error:.2e}")


def check(name, case):
    """True (passed), False (failed) or None (skipped: a bundle without the
    interpreter, which needs MLIR, for the TILE_INTERPRET=1 cases)."""
    try:
        error, limit = case("cuda")
        torch.cuda.synchronize()
    except Exception as exception:   # a case that raises fails, and the rest run
        if "interpreter backend is not available" in str(exception):
            print(f"SKIP {name}: this bundle has no interpreter")
            return None
        print(f"FAIL {name}: {type(exception).__name__}: {exception}")
        return False
    ok = error <= limit
    print(f"{'PASS' if ok else 'FAIL'} {name}: error {error:.2e} (limit {limit:.0e})")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", help="the folder of compiled kernels ($TILE_CACHE_DIR)")
    parser.add_argument("--prepare", action="store_true",
                        help="compile the cases' kernels into --kernels; launch nothing")
    parser.add_argument("--failing-assert", action="store_true",
                        help="launch a kernel whose tl.device_assert fails (the assert case's "
                             "child process)")
    args = parser.parse_args()
    if args.kernels:
        os.environ["TILE_CACHE_DIR"] = os.path.abspath(args.kernels)
    if args.failing_assert:
        launch_assert("cuda", 100.0)
        return 0
    torch.manual_seed(0)
    if args.prepare:
        prepare()
        return 0
    if not torch.cuda.is_available():
        print("FAIL kernel[grid](...) on CUDA tensors: PyTorch sees no GPU")
        return 2
    results = [check(name, case) for name, case in CASES]
    os.environ[launcher.INTERPRET_VARIABLE] = "1"
    try:
        results += [check(name, case) for name, case in INTERPRETED]
    finally:
        del os.environ[launcher.INTERPRET_VARIABLE]
    passed, failed = results.count(True), results.count(False)
    print(f"kernel[grid](...) from PyTorch: {passed} passed, {failed} failed, "
          f"{results.count(None)} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
