#!/usr/bin/env python3
"""What FlashAttention-2's features cost Tile: grouped K/V heads, windows,
softcap, ALiBi, dropout and the deterministic backward, timed beside the
same attention without them and beside the peers that have them, in one run
on one GPU.

Cases (bf16 by default, B=2, N=8192, 32 query heads, D=128, causal: the
shape of issue #36), each forward and forward + backward:
  mha             32 K/V heads (the reference)
  gqa             8 K/V heads (4 query heads a K/V head)
  mqa             1 K/V head
  window          gqa with window_size=(1024, 0) (Mistral's sliding window)
  softcap         gqa with softcap=30
  alibi           gqa with ALiBi slopes (per head)
  dropout         gqa with dropout_p=0.1
  deterministic   gqa with deterministic=True
  varlen          gqa's B sequences packed (flash_attn_varlen_func): its FLOPs
  varlen_mixed    the same tokens as sequences of 1/16, 3/16, 4/16 and 8/16
                  of them
Peers on the same inputs: SDPA (enable_gqa; among its cuDNN, flash and
efficient backends, whichever PyTorch picks) for mha, gqa, mqa and dropout,
and FlashAttention-4 (flash_attn.cute) where installed, for every case it
takes (a case a peer refuses shows its error).

TFLOP/s count the pairs each case computes: 4 * B * H * D per visible
(query, key) pair, x2.5 for the backward (so a window's TFLOP/s are
comparable with the full causal case's).  CUDA events, warm-up, the median
of many calls, two input sets rotated; prints one table.

    python3 benchmarks/attention_features_bench.py [--dtype bf16] [--n 8192]
        [--batch 2] [--heads 32] [--head-dim 128] [--target-ms 200]
        [--cases gqa,dropout]
"""

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from tile.attention import flash_attn_func, flash_attn_varlen_func  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def median_ms(run, target_ms):
    """Median time of run(i) over two input sets, by CUDA events."""
    for i in range(3):
        run(i % 2)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(3):
        run(i % 2)
    stop.record()
    stop.synchronize()
    estimate = max(start.elapsed_time(stop) / 3, 1e-3)
    reps = max(5, min(200, int(target_ms / estimate)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for i, (begin, end) in enumerate(events):
        begin.record()
        run(i % 2)
        end.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) for b, e in events)


def visible_pairs(n, causal, window):
    """(query, key) pairs the mask keeps, equal lengths: causal keeps j <= i,
    a window (left, _) also j >= i - left."""
    if not causal:
        return n * n
    left = window[0]
    if left < 0 or left >= n:
        return n * (n + 1) // 2
    # Row i sees min(i, left) + 1 keys.
    return sum(min(i, left) + 1 for i in range(n))


def packed(lengths):
    """cu_seqlens (int32, CUDA) and the longest of sequences of `lengths`."""
    cu = torch.tensor([0] + lengths, device="cuda", dtype=torch.int32).cumsum(0)
    return cu.to(torch.int32), max(lengths)


def varlen(attend, lengths):
    """attend(q, k, v, cu_seqlens, max_seqlen) on (batch, seqlen, heads, D)
    tensors whose batch * seqlen tokens are sequences of `lengths`: the
    packed views in, out viewed back."""
    cu, longest = packed(lengths)

    def run(q, k, v):
        flat = [t.view(-1, *t.shape[2:]) for t in (q, k, v)]
        return attend(*flat, cu, longest).view(q.shape)
    return run


def tile_run(causal, options, lengths=None):
    """flash_attn_func with the case's options (flash_attn_func's keywords:
    window_size, softcap, alibi_slopes, dropout_p, deterministic); with
    lengths, flash_attn_varlen_func on the packed sequences."""
    if lengths:
        return varlen(lambda q, k, v, cu, longest: flash_attn_varlen_func(
            q, k, v, cu, cu, longest, longest, causal=causal, **options), lengths)

    def run(q, k, v):
        return flash_attn_func(q, k, v, causal=causal, **options)
    return run


def sdpa_run(options):
    """SDPA with enable_gqa and the case's dropout_p, limited to its cuDNN,
    flash and efficient backends (never the math one)."""
    def run(q, k, v):
        q_, k_, v_ = (t.transpose(1, 2) for t in (q, k, v))
        gqa = k.shape[2] != q.shape[2]
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
                          SDPBackend.EFFICIENT_ATTENTION]):
            return F.scaled_dot_product_attention(
                q_, k_, v_, is_causal=True, enable_gqa=gqa,
                dropout_p=options.get("dropout_p", 0.0)).transpose(1, 2)
    return run


def fa4_run(causal, options, lengths=None):
    """FlashAttention-4 with the case's options under its names; an option
    it does not take fails the case with its error."""
    if lengths:
        def packed_run(q, k, v, cu, longest):
            from flash_attn.cute import flash_attn_varlen_func as fa4_varlen
            result = fa4_varlen(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu,
                                max_seqlen_q=longest, max_seqlen_k=longest, causal=causal)
            return result[0] if isinstance(result, tuple) else result
        return varlen(packed_run, lengths)

    def run(q, k, v):
        from flash_attn.cute import flash_attn_func as fa4_func
        kwargs = {"causal": causal}
        for name, value in options.items():
            if name == "window_size":
                kwargs[name] = tuple(value)
            elif name == "alibi_slopes":
                raise NotImplementedError("no alibi_slopes in this comparison")
            else:
                kwargs[name] = value
        result = fa4_func(q, k, v, **kwargs)
        return result[0] if isinstance(result, tuple) else result
    return run


def time_case(attend, shape, kv_heads, dtype, target_ms):
    """(forward ms, forward + backward ms), or the error's first line."""
    batch, n, heads, head_dim = shape
    generator = torch.Generator(device="cuda").manual_seed(0)
    sets = []
    for _ in range(2):
        q = torch.randn(shape, device="cuda", dtype=dtype, generator=generator)
        k, v = (torch.randn(batch, n, kv_heads, head_dim, device="cuda", dtype=dtype,
                            generator=generator) for _ in range(2))
        sets.append([t.requires_grad_() for t in (q, k, v)])
    dout = torch.randn(shape, device="cuda", dtype=dtype, generator=generator)
    try:
        with torch.no_grad():
            forward = median_ms(lambda i: attend(*sets[i]), target_ms)

        def step(i):
            out = attend(*sets[i])
            torch.autograd.grad(out, sets[i], dout)
        both = median_ms(step, target_ms)
        return forward, both
    except Exception as error:  # noqa: BLE001 - a peer without the feature
        return str(error).splitlines()[0][:60] if str(error) else type(error).__name__


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bf16", choices=DTYPES)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--target-ms", type=float, default=200.0)
    parser.add_argument("--cases", help="the cases to run, comma-separated (default: all)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("attention_features_bench: needs a CUDA GPU")
    dtype = DTYPES[args.dtype]
    shape = (args.batch, args.n, args.heads, args.head_dim)
    try:
        import flash_attn.cute  # noqa: F401
        have_fa4 = True
    except ImportError:
        have_fa4 = False
    gqa = args.heads // 4
    slopes = torch.rand(args.heads, device="cuda") * 0.5 + 0.05
    tokens = args.batch * args.n
    mixed = [tokens // 16, 3 * tokens // 16, tokens // 4]
    mixed.append(tokens - sum(mixed))
    # (case, K/V heads, options[, the packed sequences' lengths]); SDPA runs
    # the dense cases with no option but dropout_p.
    cases = [("mha", args.heads, {}), ("gqa", gqa, {}), ("mqa", 1, {}),
             ("window", gqa, {"window_size": (1024, 0)}), ("softcap", gqa, {"softcap": 30.0}),
             ("alibi", gqa, {"alibi_slopes": slopes}), ("dropout", gqa, {"dropout_p": 0.1}),
             ("deterministic", gqa, {"deterministic": True}),
             ("varlen", gqa, {}, [args.n] * args.batch), ("varlen_mixed", gqa, {}, mixed)]
    if args.cases:
        names, picked = [case[0] for case in cases], args.cases.split(",")
        unknown = ", ".join(sorted(set(picked) - set(names)))
        if unknown:
            parser.error(f"unknown case(s) {unknown} (cases: {', '.join(names)})")
        cases = [case for case in cases if case[0] in picked]
    rows = []
    for name, kv_heads, options, *packing in cases:
        packed_lengths = packing[0] if packing else None
        lengths = packed_lengths or [args.n] * args.batch
        window = options.get("window_size", (-1, -1))
        pairs = sum(visible_pairs(n, True, window) for n in lengths)
        flops = 4 * args.heads * args.head_dim * pairs
        peers = [("tile", tile_run(True, options, packed_lengths))]
        if set(options) <= {"dropout_p"} and not packed_lengths:
            peers.append(("sdpa", sdpa_run(options)))
        if have_fa4:
            peers.append(("fa4", fa4_run(True, options, packed_lengths)))
        for impl, attend in peers:
            result = time_case(attend, shape, kv_heads, dtype, args.target_ms)
            if isinstance(result, str):
                rows.append((name, kv_heads, impl, result, ""))
                continue
            forward, both = result
            backward = both - forward
            rows.append((name, kv_heads, impl, f"{flops / forward / 1e9:.0f}",
                         f"{2.5 * flops / backward / 1e9:.0f}"))
            print(f"{name} {impl}: fwd {forward:.3f} ms, fwd+bwd {both:.3f} ms", flush=True)
    print(f"\nTFLOP/s, {args.dtype}, B={args.batch} N={args.n} H={args.heads} "
          f"D={args.head_dim}, causal ({torch.cuda.get_device_name()})")
    print(f"{'case':<14}{'Hkv':>4}  {'impl':<6}{'fwd':>8}{'bwd':>8}")
    for name, kv_heads, impl, forward, backward in rows:
        print(f"{name:<14}{kv_heads:>4}  {impl:<6}{forward:>8}{backward:>8}")


if __name__ == "__main__":
    main()
