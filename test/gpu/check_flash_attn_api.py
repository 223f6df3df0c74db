#!/usr/bin/env python3
"""tile.attention.flash_attn_func on the GPU against PyTorch.

For fp16 and bf16, head dims 32, 64, 128 and 256 (and three between them,
zero-padded), causal and not, and sequence lengths that are not multiples
of the block sizes, compares the forward and
the gradients (dq, dk, dv) with torch's scaled_dot_product_attention
computed in float32 (math backend, TF32 off) from the same inputs, each
shape twice (the second call, on fresh inputs, replays the launches the
first planned); then
causal offsets (SDPA with an explicit boolean mask; rows that see no key
must give out 0, lse -inf and zero dq), FlashAttention-2's semantics
against float32 SDPA with an explicit mask built from FlashAttention's
definition (grouped-query heads at ratios 1, 2, 8 and multi-query; unequal
query and key lengths both ways, causal aligned bottom-right; sliding
windows left, right, both, cutting blocks, hiding whole rows; the packed
kv and qkv forms), non-contiguous inputs, return_lse against
torch.logsumexp, torch.no_grad, a side stream, expanded output gradients,
torch.compile and the Attention module.

Errors are normwise, |x - ref| / |ref| (|ref| floored at an RMS of 1e-3,
for gradients that are exactly zero), against limits in units of the
element type's unit roundoff u (2^-11 fp16, 2^-8 bf16): 4u for the output,
8u for the gradients (they round dS and P once more), and 1e-5 for the fp32
LSE.  Unwritten outputs show up as NaN: the caching allocator is filled with
NaN before every case.  A case that raises fails with its error and the run
goes on.  Prints one line a case as it runs, then a short table (per
section: cases, failures, the worst error against its limit) and the failed
cases; exits 1 on any failure.  test/gpu/api.sh (run.sh) runs it.

    python3 test/gpu/check_flash_attn_api.py [--quick] [--out DIR] [--junit FILE]
"""

import argparse
import itertools
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# test/gpu/ below the root of a checkout or of a GPU bundle: python/ holds tile.
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "python")))
# The dropout masks' reference (numpy), beside the interpreter's tests.
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "python")))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import junit  # noqa: E402  (beside this file)
from dropout_reference import dropout_kept  # noqa: E402  (test/python)
from tile.attention import (  # noqa: E402
    Attention,
    AttentionType,
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_func,
    functional,
)

UNIT_ROUNDOFF = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
LSE_LIMIT = 1e-5


def limit(dtype, gradient):
    return (8 if gradient else 4) * UNIT_ROUNDOFF[dtype]


def relative_error(x, ref):
    """|x - ref| / |ref|, with |ref| floored at an RMS of 1e-3: gradients
    that are exactly zero (N=1: the softmax over one key is 1 whatever the
    scores, so dq = dk = 0) are judged by their absolute error instead."""
    x, ref = x.double(), ref.double()
    if not torch.isfinite(x).all():
        return math.inf
    floor = 1e-3 * math.sqrt(max(ref.numel(), 1))
    return ((x - ref).norm() / ref.norm().clamp_min(floor)).item()


def poison_allocator(nbytes):
    """Fills freed cached blocks with NaN, so that an output element the
    kernels never write reads NaN instead of a plausible stale value."""
    filler = torch.empty(max(nbytes // 2, 1), dtype=torch.float16, device="cuda")
    filler.fill_(float("nan"))
    del filler


def lse_error(lse, ref):
    """relative_error over the rows that see a key; the others must be -inf
    in both (a NaN or a misplaced -inf is an infinite error)."""
    empty = torch.isneginf(ref)
    if not torch.equal(torch.isneginf(lse), empty) or torch.isnan(lse).any():
        return math.inf
    return relative_error(lse[~empty], ref[~empty]) if (~empty).any() else 0.0


def reference_with_offset(q, k, v, dout, causal_offset, scale):
    """As reference(), causal with an offset: query i sees key j iff j <= i +
    causal_offset, through an explicit boolean mask.  The rows that see no
    key (i < -causal_offset, a prefix) never reach SDPA (it would make them
    NaN): they get out 0, lse -inf and zero gradients."""
    n = q.shape[1]
    empty = min(n, max(0, -causal_offset))
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    visible = torch.ones(n, n, dtype=torch.bool, device=q.device).tril(causal_offset)
    scores = torch.einsum("bnhd,bmhd->bhnm", q32.detach(), k32.detach()) * scale
    lse = torch.logsumexp(scores.masked_fill(~visible, -math.inf), dim=-1)
    if empty == n:
        zeros = torch.zeros_like(q32.detach())
        return zeros, lse, zeros, zeros.clone(), zeros.clone()
    with sdpa_kernel([SDPBackend.MATH]):
        seen = F.scaled_dot_product_attention(
            q32[:, empty:].transpose(1, 2), k32.transpose(1, 2), v32.transpose(1, 2),
            attn_mask=visible[empty:], scale=scale).transpose(1, 2)
    out = torch.cat([torch.zeros_like(q32[:, :empty]), seen], dim=1)
    dq, dk, dv = torch.autograd.grad(out, (q32, k32, v32), dout.float())
    return out.detach(), lse, dq, dk, dv


def reference(q, k, v, dout, causal, scale, causal_offset=0):
    """Out, LSE and gradients in float32 through SDPA's math backend."""
    if causal and causal_offset != 0:
        return reference_with_offset(q, k, v, dout, causal_offset, scale)
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    with sdpa_kernel([SDPBackend.MATH]):
        out = F.scaled_dot_product_attention(q32.transpose(1, 2), k32.transpose(1, 2),
                                             v32.transpose(1, 2), is_causal=causal,
                                             scale=scale).transpose(1, 2)
    dq, dk, dv = torch.autograd.grad(out, (q32, k32, v32), dout.float())
    scores = torch.einsum("bnhd,bmhd->bhnm", q32.detach(), k32.detach()) * scale
    if causal:
        n = q.shape[1]
        hidden = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, -math.inf)
    lse = torch.logsumexp(scores, dim=-1)
    return out.detach(), lse, dq, dk, dv


class Results:
    def __init__(self):
        self.rows = []
        self.section = "main"

    def add(self, case, errors, limits, seconds):
        failed = [name for name, e in errors.items() if not e <= limits[name]]
        self.rows.append({"section": self.section, "case": case, "errors": errors,
                          "limits": limits, "pass": not failed, "failed": failed,
                          "seconds": seconds})
        status = "ok" if not failed else "FAIL " + ",".join(failed)
        shown = " ".join(f"{n}={e:.1e}" for n, e in errors.items())
        print(f"{case:52s} {shown}  {status}", flush=True)

    def add_check(self, case, passed, detail=""):
        self.rows.append({"section": self.section, "case": case, "errors": {}, "limits": {},
                          "pass": passed, "failed": [] if passed else ["check"],
                          "detail": detail, "seconds": 0.0})
        print(f"{case:52s} {detail}  {'ok' if passed else 'FAIL'}", flush=True)

    def guarded(self, case, check):
        """Runs check(); an exception fails `case` with its message instead of
        ending the run (after a CUDA error the later cases fail too, each
        with its own message)."""
        try:
            check()
        except Exception as error:   # any failure of one case is that case's
            self.add_check(case, False, f"{type(error).__name__}: {error}"[:300])
            if isinstance(error, torch.cuda.OutOfMemoryError):
                torch.cuda.empty_cache()


def ratio(error, bound):
    if bound > 0:
        return error / bound
    return 0.0 if error <= bound else math.inf


def worst_ratio(row):
    """The largest error / limit of a row (0 for a check without errors)."""
    return max((ratio(row["errors"][n], row["limits"][n]) for n in row["errors"]),
               default=0.0)


def print_summary(rows):
    """One line a section (cases, failed, the worst error / limit), then the
    failed cases: short enough for api.sh's tail."""
    print("\n== flash_attn_func vs float32 SDPA: per section, worst error / limit")
    print(f"{'section':40s} {'cases':>5s} {'failed':>6s} {'worst/limit':>11s}  result")
    sections = list(dict.fromkeys(row["section"] for row in rows))
    for section in sections:
        mine = [row for row in rows if row["section"] == section]
        failed = sum(not row["pass"] for row in mine)
        worst = max(worst_ratio(row) for row in mine)
        print(f"{section:40s} {len(mine):5d} {failed:6d} {worst:11.2f}  "
              f"{'ok' if not failed else 'FAIL'}")
    failures = [row for row in rows if not row["pass"]]
    if failures:
        print("\nfailed:")
    for row in failures[:30]:
        detail = row.get("detail") or " ".join(
            f"{n}={row['errors'][n]:.1e} (limit {row['limits'][n]:.1e})"
            for n in row["failed"] if n in row["errors"])
        print(f"  {row['case']}: {detail}"[:160])
    if len(failures) > 30:
        print(f"  ... and {len(failures) - 30} more (flash_attn_api_check.json)")


def random_inputs(batch, seqlen, heads, head_dim, dtype, generator, seqlen_k=None,
                  heads_k=None):
    """q and dout (batch, seqlen, heads, head_dim); k and v (batch, seqlen_k,
    heads_k, head_dim), by default q's shape."""
    shape = (batch, seqlen, heads, head_dim)
    kv_shape = (batch, seqlen if seqlen_k is None else seqlen_k,
                heads if heads_k is None else heads_k, head_dim)
    q, k, v = (torch.randn(s, generator=generator, device="cuda").mul_(0.5).to(dtype)
               for s in (shape, kv_shape, kv_shape))
    dout = torch.randn(shape, generator=generator, device="cuda").to(dtype)
    return q, k, v, dout


def check_case(results, name, q, k, v, dout, causal, scale=None, return_lse=True,
               causal_offset=0):
    results.guarded(name, lambda: _check_case(results, name, q, k, v, dout, causal, scale,
                                              causal_offset))


def _check_case(results, name, q, k, v, dout, causal, scale, causal_offset):
    """Forward, LSE and gradients of flash_attn_func against the reference."""
    dtype = q.dtype
    scale_value = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    start = time.perf_counter()
    poison_allocator(8 * q.numel() * q.element_size())
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    out, lse = flash_attn_func(qg, kg, vg, causal=causal, softmax_scale=scale,
                               return_lse=True, causal_offset=causal_offset)
    dq, dk, dv = torch.autograd.grad(out, (qg, kg, vg), dout)
    torch.cuda.synchronize()
    ref_out, ref_lse, ref_dq, ref_dk, ref_dv = reference(q, k, v, dout, causal, scale_value,
                                                         causal_offset)
    errors = {"out": relative_error(out, ref_out), "lse": lse_error(lse, ref_lse),
              "dq": relative_error(dq, ref_dq), "dk": relative_error(dk, ref_dk),
              "dv": relative_error(dv, ref_dv)}
    limits = {"out": limit(dtype, False), "lse": LSE_LIMIT, "dq": limit(dtype, True),
              "dk": limit(dtype, True), "dv": limit(dtype, True)}
    results.add(name, errors, limits, time.perf_counter() - start)


def fa_visible(seqlen_q, seqlen_k, causal, window_size, causal_offset, device):
    """FlashAttention-2's mask from its definition, (seqlen_q, seqlen_k)
    bool: query i's diagonal is key i + seqlen_k - seqlen_q (bottom-right;
    Tile's causal_offset moves it); causal sets the window's right side to
    0; a side >= 0 keeps the keys within that distance of the diagonal."""
    left, right = window_size
    if causal:
        right = 0
    query = torch.arange(seqlen_q, device=device)[:, None]
    key = torch.arange(seqlen_k, device=device)[None, :]
    diagonal = query + seqlen_k - seqlen_q + causal_offset
    visible = torch.ones(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if right >= 0:
        visible &= key <= diagonal + right
    if left >= 0:
        visible &= key >= diagonal - left
    return visible


def alibi_bias(slopes, seqlen_q, seqlen_k, device):
    """FlashAttention's ALiBi bias -slope * |i + seqlen_k - seqlen_q - j|,
    (batch, heads, seqlen_q, seqlen_k) from slopes (batch, heads)."""
    query = torch.arange(seqlen_q, device=device)[:, None]
    key = torch.arange(seqlen_k, device=device)[None, :]
    return -slopes[:, :, None, None] * (query + seqlen_k - seqlen_q - key).abs()


def reference_masked(q, k, v, dout, scale, visible, softcap=0.0, alibi_slopes=None,
                     kept=None):
    """Out, LSE and gradients in float32 through SDPA's math backend with
    the explicit boolean mask `visible`; K/V heads repeated for their query
    heads (autograd sums each group's gradients).  Rows that see no key are
    computed with every key visible (no NaN) and multiplied by 0: out 0,
    zero gradients; their lse is -inf.  softcap > 0: the scores capped to
    softcap * tanh(score / softcap), written out (SDPA has no cap); with
    alibi_slopes (batch, heads), ALiBi's bias added to them, written out
    too; with kept (dropout's keep / (1 - p), (batch, heads, seqlen_q,
    seqlen_k)), out = (P * kept) V."""
    group = q.shape[2] // k.shape[2]
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    expanded_k, expanded_v = (t.repeat_interleave(group, dim=2) for t in (k32, v32))
    seen = visible.any(-1)
    mask = visible | ~seen[:, None]
    bias = None if alibi_slopes is None else alibi_bias(alibi_slopes.float(), q.shape[1],
                                                        k.shape[1], q.device)
    if softcap > 0 or bias is not None or kept is not None:
        scores = torch.einsum("bnhd,bmhd->bhnm", q32, expanded_k) * scale
        if softcap > 0:
            scores = softcap * torch.tanh(scores / softcap)
        if bias is not None:
            scores = scores + bias
        probs = torch.softmax(scores.masked_fill(~mask, -math.inf), -1)
        if kept is not None:
            probs = probs * kept
        out = torch.einsum("bhnm,bmhd->bnhd", probs, expanded_v)
    else:
        with sdpa_kernel([SDPBackend.MATH]):
            out = F.scaled_dot_product_attention(
                q32.transpose(1, 2), expanded_k.transpose(1, 2), expanded_v.transpose(1, 2),
                attn_mask=mask, scale=scale).transpose(1, 2)
    out = out * seen[None, :, None, None]
    dq, dk, dv = torch.autograd.grad(out, (q32, k32, v32), dout.float())
    scores = torch.einsum("bnhd,bmhd->bhnm", q32.detach(), expanded_k.detach()) * scale
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    if bias is not None:
        scores = scores + bias
    lse = torch.logsumexp(scores.masked_fill(~visible, -math.inf), dim=-1)
    return out.detach(), lse, dq, dk, dv


def run_flash_attn(causal, window_size, causal_offset, softcap=0.0, alibi_slopes=None,
                   dropout_p=0.0, deterministic=False):
    """A runner for check_fa2_case: flash_attn_func with these options
    (with dropout, right after torch.manual_seed(DROPOUT_SEED))."""
    def run(q, k, v, dout):
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        torch.manual_seed(DROPOUT_SEED)
        out, lse = flash_attn_func(qg, kg, vg, dropout_p, None, causal, window_size, softcap,
                                   alibi_slopes, deterministic, return_lse=True,
                                   causal_offset=causal_offset)
        return (out, lse, *torch.autograd.grad(out, (qg, kg, vg), dout))
    return run


def run_kvpacked(causal, window_size):
    """flash_attn_kvpacked_func on k and v packed into one tensor; the
    gradient comes back packed."""
    def run(q, k, v, dout):
        qg = q.detach().requires_grad_()
        kv = torch.stack([k, v], dim=2).requires_grad_()
        out, lse = flash_attn_kvpacked_func(qg, kv, 0.0, None, causal, window_size,
                                            return_lse=True)
        dq, dkv = torch.autograd.grad(out, (qg, kv), dout)
        return (out, lse, dq, *dkv.unbind(2))
    return run


def run_qkvpacked(causal, window_size):
    def run(q, k, v, dout):
        qkv = torch.stack([q, k, v], dim=2).requires_grad_()
        out, lse = flash_attn_qkvpacked_func(qkv, 0.0, None, causal, window_size,
                                             return_lse=True)
        (dqkv,) = torch.autograd.grad(out, qkv, dout)
        return (out, lse, *dqkv.unbind(2))
    return run


# torch.manual_seed before each call with dropout: its masks' seeds.
DROPOUT_SEED = 2024


def dropout_kept_after_seed(dropout_p, batch, heads, seqlen_q, seqlen_k):
    """dropout's keep / (1 - p) for a call made right after
    torch.manual_seed(DROPOUT_SEED): the seeds it draws on the GPU, through
    the numpy reference of the kernels' masks; None without dropout."""
    if dropout_p == 0.0:
        return None
    torch.manual_seed(DROPOUT_SEED)
    _, seeds = functional._dropout_seeds(dropout_p, batch, torch.device("cuda"))
    kept = dropout_kept(seeds.cpu().numpy(), heads, seqlen_q, seqlen_k, dropout_p)
    return torch.from_numpy(kept).float().cuda()


# (batch, seqlen_q, seqlen_k, heads_k, causal, window_size) of the sections
# that check an option at every head dim: ALiBi, dropout, deterministic.
OPTION_SHAPES = ((2, 1000, 1000, 8, False, (-1, -1)), (1, 1000, 1000, 2, True, (-1, -1)),
                 (2, 500, 777, 4, True, (-1, -1)), (1, 777, 500, 8, False, (100, 50)))


def option_cases(quick, generator):
    """(index into OPTION_SHAPES, (name before the option, name after),
    (q, k, v, dout), causal, window_size) for each shape (one when quick)
    and head dim (d64 when quick), fp16 and bf16 in turn."""
    for index, (batch, seqlen_q, seqlen_k, heads_k, causal, window) in enumerate(
            OPTION_SHAPES if not quick else OPTION_SHAPES[1:2]):
        for head_dim in (32, 64, 128, 256) if not quick else (64,):
            dtype = (torch.float16, torch.bfloat16)[(index + head_dim // 64) % 2]
            tensors = random_inputs(batch, seqlen_q, 8, head_dim, dtype, generator,
                                    seqlen_k=seqlen_k, heads_k=heads_k)
            yield index, (f"{type_name(dtype)} d{head_dim}",
                          f"{'causal ' if causal else ''}window={window} B={batch} "
                          f"Nq={seqlen_q} Nk={seqlen_k} Hk={heads_k}"), tensors, causal, window


def check_fa2_case(results, name, q, k, v, dout, causal=False, window_size=(-1, -1),
                   causal_offset=0, run=None, softcap=0.0, alibi_slopes=None, dropout_p=0.0):
    """Forward, LSE and gradients of `run` (flash_attn_func with these
    options by default) against reference_masked with FlashAttention's
    mask; rows that see no key must give out 0 and zero dq exactly."""
    run = run or run_flash_attn(causal, window_size, causal_offset, softcap, alibi_slopes,
                                dropout_p)

    def check():
        start = time.perf_counter()
        poison_allocator(8 * (q.numel() + 2 * k.numel()) * q.element_size())
        out, lse, dq, dk, dv = run(q, k, v, dout)
        torch.cuda.synchronize()
        shapes = [tuple(t.shape) for t in (out, lse, dq, dk, dv)]
        want = [tuple(q.shape), (q.shape[0], q.shape[2], q.shape[1]), tuple(q.shape),
                tuple(k.shape), tuple(v.shape)]
        if shapes != want:
            results.add_check(name, False, f"shapes (out, lse, dq, dk, dv) {shapes}, "
                                           f"expected {want}")
            return
        visible = fa_visible(q.shape[1], k.shape[1], causal, window_size, causal_offset,
                             q.device)
        slopes = None if alibi_slopes is None else \
            alibi_slopes.expand(q.shape[0], q.shape[2])
        kept = dropout_kept_after_seed(dropout_p, q.shape[0], q.shape[2], q.shape[1],
                                       k.shape[1])
        ref = reference_masked(q, k, v, dout, 1.0 / math.sqrt(q.shape[-1]), visible,
                               softcap, slopes, kept)
        empty = ~visible.any(-1)
        errors = {"out": relative_error(out, ref[0]), "lse": lse_error(lse, ref[1]),
                  "dq": relative_error(dq, ref[2]), "dk": relative_error(dk, ref[3]),
                  "dv": relative_error(dv, ref[4]),
                  # Rows that see no key: exactly 0 (a NaN or a stray value
                  # counts as an infinite error).
                  "empty": 0.0 if bool((out[:, empty] == 0).all() and (dq[:, empty] == 0).all())
                  else math.inf}
        limits = {"out": limit(q.dtype, False), "lse": LSE_LIMIT,
                  "dq": limit(q.dtype, True), "dk": limit(q.dtype, True),
                  "dv": limit(q.dtype, True), "empty": 0.0}
        results.add(name, errors, limits, time.perf_counter() - start)
    results.guarded(name, check)


def check_varlen_case(results, name, lens_q, lens_k, heads, heads_k, head_dim, dtype,
                      causal, window, softcap, generator):
    """flash_attn_varlen_func on a packed batch: each sequence's out, lse and
    gradients against reference_masked of that sequence alone; a sequence
    without keys must give out 0 and zero dq exactly."""
    def check():
        start = time.perf_counter()
        q, dout = (torch.randn(sum(lens_q), heads, head_dim, generator=generator,
                               device="cuda").mul_(0.5).to(dtype) for _ in range(2))
        k, v = (torch.randn(sum(lens_k), heads_k, head_dim, generator=generator,
                            device="cuda").mul_(0.5).to(dtype) for _ in range(2))
        cu_q, cu_k = (torch.tensor([0] + list(itertools.accumulate(lens)),
                                   dtype=torch.int32).to(q.device)
                      for lens in (lens_q, lens_k))
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        out, lse = flash_attn_varlen_func(qg, kg, vg, cu_q, cu_k, max(lens_q), max(lens_k),
                                          0.0, None, causal, window, softcap,
                                          return_lse=True)
        dq, dk, dv = torch.autograd.grad(out, (qg, kg, vg), dout)
        torch.cuda.synchronize()
        worst = {"out": 0.0, "lse": 0.0, "dq": 0.0, "dk": 0.0, "dv": 0.0, "empty": 0.0}
        for b, (lq, lk) in enumerate(zip(lens_q, lens_k)):
            rq = slice(int(cu_q[b]), int(cu_q[b + 1]))
            rk = slice(int(cu_k[b]), int(cu_k[b + 1]))
            if lq == 0:
                continue
            if lk == 0:
                if not bool((out[rq] == 0).all() and (dq[rq] == 0).all()):
                    worst["empty"] = math.inf
                continue
            visible = fa_visible(lq, lk, causal, window, 0, q.device)
            ref = reference_masked(q[rq][None], k[rk][None], v[rk][None], dout[rq][None],
                                   1.0 / math.sqrt(head_dim), visible, softcap)
            got = (out[rq][None], lse[:, rq][None], dq[rq][None], dk[rk][None], dv[rk][None])
            errors = (relative_error(got[0], ref[0]), lse_error(got[1], ref[1]),
                      *(relative_error(g, r) for g, r in zip(got[2:], ref[2:])))
            for key, error in zip(("out", "lse", "dq", "dk", "dv"), errors):
                worst[key] = max(worst[key], error)
            empty = ~visible.any(-1)
            if not bool((out[rq][empty] == 0).all() and (dq[rq][empty] == 0).all()):
                worst["empty"] = math.inf
        limits = {"out": limit(dtype, False), "lse": LSE_LIMIT, "dq": limit(dtype, True),
                  "dk": limit(dtype, True), "dv": limit(dtype, True), "empty": 0.0}
        results.add(name, worst, limits, time.perf_counter() - start)
    results.guarded(name, check)


def type_name(dtype):
    return str(dtype)[6:]


def fa2_sections(results, generator, quick):
    """FlashAttention-2's semantics: grouped heads, unequal lengths, windows,
    the packed forms."""
    dtypes_dims = [(torch.float16, 64), (torch.bfloat16, 128)] if quick else [
        (torch.float16, 64), (torch.float16, 128), (torch.bfloat16, 64), (torch.bfloat16, 128)]

    results.section = "GQA: heads/heads_k 1, 2, 8, MQA"
    head_pairs = ((8, 8), (8, 4), (16, 2), (8, 1))
    for dtype, head_dim in dtypes_dims:
        for heads, heads_k in head_pairs if not quick else ((8, 4), (8, 1)):
            for causal in (False, True):
                seqlen = 1000
                tensors = random_inputs(2, seqlen, heads, head_dim, dtype, generator,
                                        heads_k=heads_k)
                check_fa2_case(results, f"{type_name(dtype)} d{head_dim} "
                               f"{'causal' if causal else 'full'} N={seqlen} H={heads} "
                               f"Hk={heads_k}", *tensors, causal)

    results.section = "unequal lengths (bottom-right)"
    # (1000, 1) would judge rounding noise: with one key the exact dk is 0.
    length_pairs = ((1000, 3000), (3000, 777), (777, 1000), (1, 777), (1000, 17))
    for index, (seqlen_q, seqlen_k) in enumerate(length_pairs if not quick else
                                                 length_pairs[:2]):
        for causal in (False, True):
            for dtype, head_dim in dtypes_dims[index % 2::2] if not quick else dtypes_dims:
                tensors = random_inputs(1, seqlen_q, 8, head_dim, dtype, generator,
                                        seqlen_k=seqlen_k, heads_k=2)
                check_fa2_case(results, f"{type_name(dtype)} d{head_dim} "
                               f"{'causal' if causal else 'full'} Nq={seqlen_q} "
                               f"Nk={seqlen_k} H=8 Hk=2", *tensors, causal)

    results.section = "windows"
    # (seqlen_q, seqlen_k, causal, window_size, causal_offset)
    windows = (
        (1000, 1000, True, (256, -1), 0),      # sliding window (Mistral's form)
        (1000, 1000, True, (127, -1), 0),      # cuts the blocks
        (1000, 1000, False, (100, 100), 0),    # both sides
        (777, 777, False, (-1, 64), 0),        # right only
        (777, 777, False, (64, -1), 0),        # left only
        (1000, 3000, True, (500, -1), 0),
        (3000, 777, False, (200, 50), 0),      # the first rows see no key
        (1000, 1000, False, (50, -1), 300),    # the last 250 rows see no key
        (777, 777, True, (0, -1), 0),          # the diagonal alone
        (1000, 1000, True, (5000, -1), 0),     # wider than the keys: causal
    )
    for index, (seqlen_q, seqlen_k, causal, window, offset) in enumerate(
            windows if not quick else windows[:3]):
        for dtype, head_dim in dtypes_dims[index % 2::2] if not quick else dtypes_dims[:1]:
            tensors = random_inputs(1, seqlen_q, 8, head_dim, dtype, generator,
                                    seqlen_k=seqlen_k, heads_k=4)
            check_fa2_case(results, f"{type_name(dtype)} d{head_dim} "
                           f"{'causal ' if causal else ''}window={window} "
                           f"off={offset} Nq={seqlen_q} Nk={seqlen_k}",
                           *tensors, causal, window, offset)

    results.section = "softcap"
    # (seqlen_q, seqlen_k, heads_k, causal, window_size, softcap): small caps
    # bend most scores; 50 is Gemma 2's.
    capped = ((1000, 1000, 8, False, (-1, -1), 1.0), (1000, 1000, 4, True, (-1, -1), 0.5),
              (777, 1000, 2, True, (200, -1), 50.0), (1000, 777, 8, False, (100, 100), 2.0))
    for index, (seqlen_q, seqlen_k, heads_k, causal, window, cap) in enumerate(
            capped if not quick else capped[1:3]):
        for dtype, head_dim in dtypes_dims[index % 2::2] if not quick else dtypes_dims[:1]:
            tensors = random_inputs(1, seqlen_q, 8, head_dim, dtype, generator,
                                    seqlen_k=seqlen_k, heads_k=heads_k)
            check_fa2_case(results, f"{type_name(dtype)} d{head_dim} softcap={cap} "
                           f"{'causal ' if causal else ''}window={window} "
                           f"Nq={seqlen_q} Nk={seqlen_k} Hk={heads_k}",
                           *tensors, causal, window, softcap=cap)

    results.section = "alibi"
    for index, (prefix, suffix), tensors, causal, window in option_cases(quick, generator):
        shape = (8,) if index % 2 else (tensors[0].shape[0], 8)
        slopes = torch.rand(shape, generator=generator, device="cuda") * 0.5
        check_fa2_case(results, f"{prefix} alibi {shape} {suffix}", *tensors, causal, window,
                       alibi_slopes=slopes)

    results.section = "dropout"
    # The masks the kernels draw against the reference's.
    for index, (prefix, suffix), tensors, causal, window in option_cases(quick, generator):
        dropout_p = (0.1, 0.3, 0.5, 0.2)[index]
        check_fa2_case(results, f"{prefix} dropout={dropout_p} {suffix}", *tensors, causal,
                       window, dropout_p=dropout_p)

    results.section = "deterministic backward"
    # Against the reference, then bit for bit against a second run.
    for _, (prefix, suffix), tensors, causal, window in option_cases(quick, generator):
        name = f"{prefix} deterministic {suffix}"
        run = run_flash_attn(causal, window, 0, deterministic=True)
        check_fa2_case(results, name, *tensors, causal, window, run=run)

        def same_twice(run=run, tensors=tensors, name=name):
            first, second = run(*tensors), run(*tensors)
            results.add_check(name + " twice", all(
                torch.equal(a, b) for a, b in zip(first[2:], second[2:])),
                "dq, dk, dv bit for bit")
        results.guarded(name + " twice", same_twice)

    results.section = "windows and softcap at d32 and d256"
    # The kernels of the head dims the cases above leave out: a window that
    # cuts the blocks, a capped one.
    for head_dim in (32, 256) if not quick else ():
        for dtype in (torch.float16, torch.bfloat16):
            for causal, window, cap in ((True, (127, -1), 0.0), (True, (200, -1), 50.0),
                                        (False, (100, 100), 2.0)):
                tensors = random_inputs(1, 1000, 8, head_dim, dtype, generator,
                                        seqlen_k=777, heads_k=2)
                check_fa2_case(results, f"{type_name(dtype)} d{head_dim} softcap={cap} "
                               f"{'causal ' if causal else ''}window={window} "
                               f"Nq=1000 Nk=777 Hk=2", *tensors, causal, window,
                               softcap=cap)

    results.section = "varlen (packed sequences)"
    # (query lengths, key lengths, heads_k, causal, window_size, softcap):
    # empty and one-token sequences, lengths across the blocks, GQA.
    batches = (([1000, 1, 0, 777, 257], [1000, 1, 5, 300, 257], 2, True, (-1, -1), 0.0),
               ([517, 1000, 64], [1200, 700, 64], 8, False, (-1, -1), 0.0),
               ([1000, 333], [1000, 333], 4, True, (128, -1), 0.0),
               ([600, 90], [800, 90], 1, True, (-1, -1), 1.0))
    for index, (lens_q, lens_k, heads_k, causal, window, cap) in enumerate(
            batches if not quick else batches[:2]):
        for dtype, head_dim in dtypes_dims[index % 2::2] if not quick else dtypes_dims[:1]:
            check_varlen_case(results, f"{type_name(dtype)} d{head_dim} Nq={lens_q} "
                              f"Nk={lens_k} Hk={heads_k} {'causal ' if causal else ''}"
                              f"window={window} softcap={cap}", lens_q, lens_k, 8, heads_k,
                              head_dim, dtype, causal, window, cap, generator)

    results.section = "packed kv and qkv"
    tensors = random_inputs(2, 777, 8, 64, torch.float16, generator, seqlen_k=1000,
                            heads_k=2)
    check_fa2_case(results, "kvpacked fp16 d64 causal Nq=777 Nk=1000 Hk=2", *tensors,
                   True, run=run_kvpacked(True, (-1, -1)))
    tensors = random_inputs(2, 1000, 8, 128, torch.bfloat16, generator)
    check_fa2_case(results, "qkvpacked bf16 d128 window=(128, 0) N=1000", *tensors,
                   False, (128, 0), run=run_qkvpacked(False, (128, 0)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer shapes")
    parser.add_argument("--out", default=os.environ.get("OUT", "."),
                        help="folder for flash_attn_api_check.json")
    parser.add_argument("--junit", metavar="FILE",
                        help="also write one JUnit test case a check here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("check_flash_attn_api: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    generator = torch.Generator(device="cuda").manual_seed(2026)
    results = Results()

    results.section = "same lengths, heads (SDPA)"
    seqlens = (1, 17, 100, 257, 1000, 4096) if not args.quick else (1, 100, 257)
    for dtype in (torch.float16, torch.bfloat16):
        for head_dim in (32, 64, 128, 256):
            for causal in (False, True):
                for seqlen in seqlens:
                    batch, heads = (2, 32) if seqlen <= 1000 else (1, 16)
                    tensors = random_inputs(batch, seqlen, heads, head_dim, dtype, generator)
                    name = (f"{type_name(dtype)} d{head_dim} {'causal' if causal else 'full'} "
                            f"N={seqlen} B={batch} H={heads}")
                    check_case(results, name, *tensors, causal)
                    # Fresh inputs of the same shape: launched through the
                    # plans the first call made (tile/attention/plan.py).
                    tensors = random_inputs(batch, seqlen, heads, head_dim, dtype, generator)
                    check_case(results, f"{name} again", *tensors, causal)
    # Head dims between the kernels': 96 and 192 have forwards of their own
    # (BLOCK_D), the others run zero-padded to the next.
    for dtype, head_dim in ((torch.float16, 40), (torch.bfloat16, 80), (torch.float16, 96),
                            (torch.bfloat16, 96), (torch.float16, 192), (torch.bfloat16, 192),
                            (torch.float16, 200)):
        for causal in (False, True):
            tensors = random_inputs(2, 257, 8, head_dim, dtype, generator)
            check_case(results, f"{type_name(dtype)} d{head_dim} (ragged) "
                       f"{'causal' if causal else 'full'} N=257 B=2 H=8", *tensors, causal)

    # Causal offsets: -1 as striped ring attention uses it, ragged ones, one
    # past N (every key visible) and ones where no row sees a key.
    results.section = "causal offsets"
    offset_cases = ((1, -1), (257, -1), (1000, -37), (300, 45), (100, 150), (100, -100),
                    (4096, -1)) if not args.quick else ((257, -1), (300, 45), (100, -100))
    for dtype in (torch.float16, torch.bfloat16):
        for head_dim in (64, 128):
            for seqlen, offset in offset_cases:
                batch, heads = (2, 8) if seqlen <= 1000 else (1, 16)
                tensors = random_inputs(batch, seqlen, heads, head_dim, dtype, generator)
                name = (f"{type_name(dtype)} d{head_dim} causal offset={offset} "
                        f"N={seqlen} B={batch} H={heads}")
                check_case(results, name, *tensors, True, causal_offset=offset)

    fa2_sections(results, generator, args.quick)

    results.section = "layouts, streams, compile, errors"
    layout_checks(results, generator)
    results.guarded("compile checks", lambda: compile_checks(results, generator))
    error_checks(results)
    results.section = "Attention module"
    results.guarded("Attention module", lambda: module_checks(results))

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "flash_attn_api_check.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "rows": results.rows}, f, indent=1, default=str)

    print_summary(results.rows)
    failed = sum(not r["pass"] for r in results.rows)
    if args.junit:
        junit.write(args.junit, "flash_attn_api", [
            (row["case"], row["pass"], row.get("detail") or " ".join(
                f"{n}={row['errors'][n]:.1e} (limit {row['limits'][n]:.1e})"
                for n in row["failed"] if n in row["errors"]) or "failed")
            for row in results.rows])
    print(f"flash_attn_func: {len(results.rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


def layout_checks(results, generator):
    """A permuted (batch, heads, seqlen, head_dim) tensor goes in as it is; a
    packed qkv slice and padded rows are copied; an expanded output
    gradient; no_grad and a side stream give the default path's output."""
    batch, seqlen, heads, head_dim = 2, 300, 8, 64
    dtype = torch.float16
    shape = (batch, seqlen, heads, head_dim)
    bhnd = [torch.randn(batch, heads, seqlen, head_dim, generator=generator,
                        device="cuda").to(dtype).transpose(1, 2) for _ in range(3)]
    dout = torch.randn(shape, generator=generator, device="cuda").to(dtype)
    check_case(results, "layout (b,h,n,d).transpose(1,2) causal", *bhnd, dout, True)
    packed = torch.randn(batch, seqlen, 3, heads, head_dim, generator=generator,
                         device="cuda").to(dtype)
    check_case(results, "layout packed qkv unbind(2)", *packed.unbind(2), dout, False)
    padded = torch.randn(batch, seqlen, heads, head_dim + 8, generator=generator,
                         device="cuda").to(torch.bfloat16)[..., :head_dim]
    check_case(results, "layout padded rows (stride 72), bf16",
               padded, padded.flip(1), padded.flip(2), dout.bfloat16(), True)
    q, k, v, dout = random_inputs(batch, seqlen, heads, 128, torch.bfloat16, generator)
    check_case(results, "softmax_scale=0.3 d128 bf16", q, k, v, dout, True, scale=0.3)

    q, k, v, _ = random_inputs(batch, seqlen, heads, head_dim, torch.float16, generator)

    def expanded_gradient():
        # An expanded gradient (out.sum()) has stride 0 everywhere.
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        flash_attn_func(qg, kg, vg, causal=True).sum().backward()
        ones = torch.ones(shape, device="cuda", dtype=torch.float16)
        _, _, ref_dq, ref_dk, ref_dv = reference(q, k, v, ones, True, 1 / math.sqrt(head_dim))
        errors = {"dq": relative_error(qg.grad, ref_dq),
                  "dk": relative_error(kg.grad, ref_dk),
                  "dv": relative_error(vg.grad, ref_dv)}
        results.add("expanded dout (out.sum().backward())", errors,
                    {n: limit(torch.float16, True) for n in errors}, 0.0)
    results.guarded("expanded dout (out.sum().backward())", expanded_gradient)

    def same_output():
        with torch.no_grad():
            plain = flash_attn_func(q, k, v, causal=True)
        results.add_check("torch.no_grad",
                          torch.equal(plain, flash_attn_func(q, k, v, causal=True)),
                          f"requires_grad={plain.requires_grad}")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            on_side = flash_attn_func(q, k, v, causal=True)
        side.synchronize()
        results.add_check("side stream", torch.equal(plain, on_side))
        results.add_check("FA2 positional (q, k, v, 0.0, None, True)",
                          torch.equal(plain, flash_attn_func(q, k, v, 0.0, None, True)))
    results.guarded("no_grad, side stream, FA2 positional", same_output)


def compile_checks(results, generator):
    """torch.compile(fullgraph=True) with the default backend: the custom ops
    give eager's values, with grouped heads, unequal lengths and a window
    too.  The backward's dQ is summed with atomics in an order that varies,
    so gradients are compared within the check's limits, not bit for bit."""
    cases = (
        ("torch.compile fullgraph causal", (2, 300, 8, 64), 300, 8,
         lambda q, k, v: flash_attn_func(q, k, v, causal=True) * 2),
        ("torch.compile fullgraph GQA 4 window Nq=300 Nk=700", (2, 300, 8, 64), 700, 2,
         lambda q, k, v: flash_attn_func(q, k, v, 0.0, None, True, (100, -1)) * 2),
    )
    for name, shape, seqlen_k, heads_k, step in cases:
        q, k, v, grad_out = random_inputs(*shape, torch.float16, generator,
                                          seqlen_k=seqlen_k, heads_k=heads_k)
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        eager = step(qg, kg, vg)
        eager_grads = torch.autograd.grad(eager, (qg, kg, vg), grad_out)
        torch._dynamo.reset()
        compiled = torch.compile(step, fullgraph=True)(qg, kg, vg)
        compiled_grads = torch.autograd.grad(compiled, (qg, kg, vg), grad_out)
        errors = {"out": 0.0 if torch.equal(eager, compiled) else math.inf}
        errors.update({f"d{n}": relative_error(c, e)
                       for n, c, e in zip("qkv", compiled_grads, eager_grads)})
        limits = {"out": 0.0, **{f"d{n}": limit(torch.float16, True) for n in "qkv"}}
        results.add(name, errors, limits, 0.0)


def error_checks(results):
    """Errors the API must raise on the GPU too."""
    def half(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16)
    for case, call, expected in (
            ("head_dim 288 -> ValueError", lambda: flash_attn_func(*(half(1, 8, 2, 288),) * 3),
             ValueError),
            ("fp32 -> TypeError", lambda: flash_attn_func(
                *(torch.randn(1, 8, 2, 64, device="cuda"),) * 3), TypeError),
            ("causal_offset=True -> TypeError", lambda: flash_attn_func(
                *(half(1, 8, 2, 64),) * 3, causal=True, causal_offset=True), TypeError),
            ("heads_k 3 of 8 -> ValueError", lambda: flash_attn_func(
                half(1, 8, 8, 64), half(1, 8, 3, 64), half(1, 8, 3, 64)), ValueError),
            ("k, v shapes differ -> ValueError", lambda: flash_attn_func(
                half(1, 8, 8, 64), half(1, 9, 2, 64), half(1, 8, 2, 64)), ValueError)):
        try:
            call()
            results.add_check(case, False, "no error")
        except expected as error:
            results.add_check(case, True, str(error)[:60])
        except Exception as error:   # the wrong kind of error fails the case
            results.add_check(case, False, f"{type(error).__name__}: {error}"[:100])


def module_checks(results):
    """The Attention module: FLASH against SDPA with the same weights."""
    torch.manual_seed(7)
    for causal in (False, True):
        flash = Attention(512, 8, causal=causal, attention_type=AttentionType.FLASH,
                          device="cuda", dtype=torch.bfloat16)
        sdpa = Attention(512, 8, causal=causal, attention_type="sdpa",
                         device="cuda", dtype=torch.float32)
        sdpa.load_state_dict({n: p.float() for n, p in flash.state_dict().items()})
        x = torch.randn(2, 333, 512, device="cuda")
        y_flash = flash(x.bfloat16())
        y_flash.float().square().mean().backward()
        with sdpa_kernel([SDPBackend.MATH]):
            y_ref = sdpa(x)
            y_ref.square().mean().backward()
        errors = {"out": relative_error(y_flash, y_ref),
                  "dW_qkv": relative_error(flash.qkv.weight.grad, sdpa.qkv.weight.grad)}
        results.add(f"Attention module bf16 {'causal' if causal else 'full'}", errors,
                    {"out": limit(torch.bfloat16, False) * 2,
                     "dW_qkv": limit(torch.bfloat16, True) * 2}, 0.0)


if __name__ == "__main__":
    sys.exit(main())
