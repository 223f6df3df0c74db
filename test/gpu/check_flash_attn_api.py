#!/usr/bin/env python3
"""tile.attention.flash_attn_func on the GPU against PyTorch.

For fp16 and bf16, head dims 64 and 128, causal and not, and sequence
lengths that are not multiples of the block sizes, compares the forward and
the gradients (dq, dk, dv) with torch's scaled_dot_product_attention
computed in float32 (math backend, TF32 off) from the same inputs; then
causal offsets (SDPA with an explicit boolean mask; rows that see no key
must give out 0, lse -inf and zero dq), non-contiguous inputs, return_lse
against torch.logsumexp, torch.no_grad, a side stream, expanded output
gradients and the Attention module.

Errors are normwise, |x - ref| / |ref| (|ref| floored at an RMS of 1e-3,
for gradients that are exactly zero), against limits in units of the
element type's unit roundoff u (2^-11 fp16, 2^-8 bf16): 4u for the output,
8u for the gradients (they round dS and P once more), and 1e-5 for the fp32
LSE.  Unwritten outputs show up as NaN: the caching allocator is filled with
NaN before every case.  Prints a table last; exits 1 on any failure.
test/gpu/api.sh (run.sh) runs it.

    python3 test/gpu/check_flash_attn_api.py [--quick] [--out DIR] [--junit FILE]
"""

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# test/gpu/ below the root of a checkout or of a GPU bundle: python/ holds tile.
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "python")))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import junit  # noqa: E402  (beside this file)
from tile.attention import Attention, AttentionType, flash_attn_func  # noqa: E402

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

    def add(self, case, errors, limits, seconds):
        failed = [name for name, e in errors.items() if not e <= limits[name]]
        self.rows.append({"case": case, "errors": errors, "limits": limits,
                          "pass": not failed, "failed": failed, "seconds": seconds})
        status = "ok" if not failed else "FAIL " + ",".join(failed)
        shown = " ".join(f"{n}={e:.1e}" for n, e in errors.items())
        print(f"{case:44s} {shown}  {status}", flush=True)

    def add_check(self, case, passed, detail=""):
        self.rows.append({"case": case, "errors": {}, "limits": {}, "pass": passed,
                          "failed": [] if passed else ["check"], "detail": detail,
                          "seconds": 0.0})
        print(f"{case:44s} {detail}  {'ok' if passed else 'FAIL'}", flush=True)


def random_inputs(batch, seqlen, heads, head_dim, dtype, generator):
    shape = (batch, seqlen, heads, head_dim)
    q, k, v = (torch.randn(shape, generator=generator, device="cuda").mul_(0.5).to(dtype)
               for _ in range(3))
    dout = torch.randn(shape, generator=generator, device="cuda").to(dtype)
    return q, k, v, dout


def check_case(results, name, q, k, v, dout, causal, scale=None, return_lse=True,
               causal_offset=0):
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

    seqlens = (1, 17, 100, 257, 1000, 4096) if not args.quick else (1, 100, 257)
    for dtype in (torch.float16, torch.bfloat16):
        for head_dim in (64, 128):
            for causal in (False, True):
                for seqlen in seqlens:
                    batch, heads = (2, 32) if seqlen <= 1000 else (1, 16)
                    tensors = random_inputs(batch, seqlen, heads, head_dim, dtype, generator)
                    name = (f"{str(dtype)[6:]} d{head_dim} {'causal' if causal else 'full'} "
                            f"N={seqlen} B={batch} H={heads}")
                    check_case(results, name, *tensors, causal)

    # Causal offsets: -1 as striped ring attention uses it, ragged ones, one
    # past N (every key visible) and ones where no row sees a key.
    offset_cases = ((1, -1), (257, -1), (1000, -37), (300, 45), (100, 150), (100, -100),
                    (4096, -1)) if not args.quick else ((257, -1), (300, 45), (100, -100))
    for dtype in (torch.float16, torch.bfloat16):
        for head_dim in (64, 128):
            for seqlen, offset in offset_cases:
                batch, heads = (2, 8) if seqlen <= 1000 else (1, 16)
                tensors = random_inputs(batch, seqlen, heads, head_dim, dtype, generator)
                name = (f"{str(dtype)[6:]} d{head_dim} causal offset={offset} "
                        f"N={seqlen} B={batch} H={heads}")
                check_case(results, name, *tensors, True, causal_offset=offset)

    # Layouts: a permuted (batch, heads, seqlen, head_dim) tensor goes in as
    # it is; a packed qkv slice and padded rows are copied.
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

    # An expanded gradient (out.sum()) has stride 0 everywhere.
    q, k, v, _ = random_inputs(batch, seqlen, heads, head_dim, torch.float16, generator)
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    flash_attn_func(qg, kg, vg, causal=True).sum().backward()
    ones = torch.ones(shape, device="cuda", dtype=torch.float16)
    _, _, ref_dq, ref_dk, ref_dv = reference(q, k, v, ones, True, 1 / math.sqrt(head_dim))
    errors = {"dq": relative_error(qg.grad, ref_dq), "dk": relative_error(kg.grad, ref_dk),
              "dv": relative_error(vg.grad, ref_dv)}
    results.add("expanded dout (out.sum().backward())", errors,
                {n: limit(torch.float16, True) for n in errors}, 0.0)

    # no_grad, and a side stream, give the same output as the default path.
    with torch.no_grad():
        plain = flash_attn_func(q, k, v, causal=True)
    results.add_check("torch.no_grad", torch.equal(plain, flash_attn_func(q, k, v, causal=True)),
                      f"requires_grad={plain.requires_grad}")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        on_side = flash_attn_func(q, k, v, causal=True)
    side.synchronize()
    results.add_check("side stream", torch.equal(plain, on_side))

    # FlashAttention-2's positional order, and torch.compile(fullgraph=True)
    # with the default backend: the custom ops give eager's values.
    results.add_check("FA2 positional (q, k, v, 0.0, None, True)",
                      torch.equal(plain, flash_attn_func(q, k, v, 0.0, None, True)))
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))

    def step(q, k, v):
        return flash_attn_func(q, k, v, causal=True) * 2

    grad_out = torch.randn_like(q)
    eager = step(qg, kg, vg)
    eager_grads = torch.autograd.grad(eager, (qg, kg, vg), grad_out)
    compiled = torch.compile(step, fullgraph=True)(qg, kg, vg)
    compiled_grads = torch.autograd.grad(compiled, (qg, kg, vg), grad_out)
    results.add_check("torch.compile fullgraph: out and grads as eager",
                      torch.equal(eager, compiled)
                      and all(torch.equal(a, b) for a, b in zip(eager_grads, compiled_grads)))

    # Errors the API must raise on the GPU too.
    for case, call, expected in (
            ("head_dim 96 -> ValueError", lambda: flash_attn_func(
                *(torch.randn(1, 8, 2, 96, device="cuda", dtype=torch.float16),) * 3),
             ValueError),
            ("fp32 -> TypeError", lambda: flash_attn_func(
                *(torch.randn(1, 8, 2, 64, device="cuda"),) * 3), TypeError),
            ("causal_offset=True -> TypeError", lambda: flash_attn_func(
                *(torch.randn(1, 8, 2, 64, device="cuda", dtype=torch.float16),) * 3,
                causal=True, causal_offset=True), TypeError)):
        try:
            call()
            results.add_check(case, False, "no error")
        except expected as error:
            results.add_check(case, True, str(error)[:60])

    # The Attention module: FLASH against SDPA with the same weights.
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

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "flash_attn_api_check.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "rows": results.rows}, f, indent=1, default=str)

    print("\n== flash_attn_func vs float32 SDPA: worst error / limit per case")
    print(f"{'case':44s} {'worst':>8s} {'of':>4s} {'limit':>8s}  result")
    for row in results.rows:
        if row["errors"]:
            worst = max(row["errors"], key=lambda n: row["errors"][n] / row["limits"][n])
            print(f"{row['case']:44s} {row['errors'][worst]:8.1e} {worst:>4s} "
                  f"{row['limits'][worst]:8.1e}  {'ok' if row['pass'] else 'FAIL'}")
        else:
            print(f"{row['case']:44s} {'':8s} {'':4s} {'':8s}  {'ok' if row['pass'] else 'FAIL'}")
    failed = sum(not r["pass"] for r in results.rows)
    if args.junit:
        junit.write(args.junit, "flash_attn_api", [
            (row["case"], row["pass"], row.get("detail") or " ".join(
                f"{n}={row['errors'][n]:.1e} (limit {row['limits'][n]:.1e})"
                for n in row["failed"] if n in row["errors"]) or "failed")
            for row in results.rows])
    print(f"flash_attn_func: {len(results.rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
