#!/usr/bin/env python3
"""Attention speed on one GPU: Tile against PyTorch, same run, same shapes.

Times the forward and the backward of
  tile            tile.attention.flash_attn_func (the compiled kernels, in-process)
  fa4             FlashAttention-4 (flash_attn.cute; its SM90 path on Hopper), where
                  installed (../shared/anchors/fa4/README.md says how on the GPU machine)
  sdpa-cudnn      torch scaled_dot_product_attention, cuDNN backend
  sdpa-flash      ... flash backend (FlashAttention-2)
  sdpa-efficient  ... memory-efficient backend
  sdpa-math       ... math backend
  naive           scores materialised: softmax(q k^T * scale) v, softmax in fp32
on (batch, seqlen, heads, head_dim) inputs (H * D = 2048: H=32 at D=64,
batch * seqlen = 16384), causal and not, fp16 and bf16.  CUDA events around
each call, warm-up first, median of many, input sets rotated so that the L2
cache does not flatter anyone; each shape's implementations run in two
passes, the second in reverse order, and each time is the mean of its two
medians: whichever runs right after another runs on a GPU that one has
heated, and in a fixed order Tile / FA2 moved by up to 8% between the
two orders (H100, docs/performance.md).  FLOPs: 4*B*H*N^2*D, x0.5
causal, x2.5 for the backward.  An implementation that errors, runs out of
memory or is not installed is recorded as n/a and the run goes on.

Also the classic case (B=32, N=512, H=16, D=64, causal, fp16): time and
peak device memory of a forward + backward for each implementation, and
the time of the same calls captured in a CUDA graph and replayed, where
the host's launch path costs nothing (at this size it can cost more than
the kernels: docs/performance.md).

Writes attention_bench.json, attention_bench.csv and PNG plots (TFLOP/s
against N, one line per implementation, one plot per dtype, head dim,
causality and direction) to --out; prints one table last, with Tile / FA2
and Tile / the faster of cuDNN and FA4 (the target: above 1 everywhere).

With --softmax it times Tile's four softmax kernels (launched through the
Tile runtime, as tile-run softmax chooses them) and torch.softmax instead,
on fp32 matrices of --sizes, with the same timing; GB/s counts one fp32
read and one fp32 write of the matrix.  Writes softmax_bench.json and
softmax_bench.csv; prints one table last.

    python3 benchmarks/attention_bench.py [--quick] [--dtype fp16] [--head-dim 64]
        [--n 1024,4096] [--causal yes|no|both] [--impl tile,sdpa-flash] [--out DIR]
    python3 benchmarks/attention_bench.py --softmax [--sizes 4096x1024,4096x8192]
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import tile  # noqa: E402
from tile import runtime  # noqa: E402
from tile.attention import flash_attn_func  # noqa: E402
from tile.attention.bundle import find_kernel_dir  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
# H * D = 2048, or as near as whole heads come: head dims between the
# kernels' (96, 192) run zero-padded by Tile and natively by FA2.
HEADS = {32: 64, 64: 32, 96: 21, 128: 16, 192: 11, 256: 8}
TOKENS = 16384                      # batch * seqlen
SEQLENS = (512, 1024, 2048, 4096, 8192, 16384)
SDPA_BACKENDS = {"sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
                 "sdpa-flash": SDPBackend.FLASH_ATTENTION,
                 "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION,
                 "sdpa-math": SDPBackend.MATH}
IMPLEMENTATIONS = ("tile", "fa4", *SDPA_BACKENDS, "naive")
REFERENCE = "sdpa-flash"            # FlashAttention-2, the ratio's denominator
FASTEST_PEERS = ("sdpa-cudnn", "fa4")   # the faster of them: the target
# Implementations whose score matrix dwarfs the L2 cache: one input set,
# so that two autograd graphs of N^2 scores need not fit at once.
MATERIALISING = ("sdpa-math", "naive")
# --softmax: fp32 (rows, cols) matrices, Tile's four kernels and PyTorch's.
SOFTMAX_SIZES = ((4096, 1024), (4096, 4096), (4096, 8192))
SOFTMAX_IMPLEMENTATIONS = ("tile-v1", "tile-v2", "tile-v3", "tile-v4", "torch")


# --------------------------------------------------------------------------
# Implementations, all on (batch, seqlen, heads, head_dim) tensors
# --------------------------------------------------------------------------

def tile_attention(q, k, v, causal):
    return flash_attn_func(q, k, v, causal=causal)


def sdpa_attention(backend):
    def run(q, k, v, causal):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                is_causal=causal).transpose(1, 2)
    return run


def fa4_attention(q, k, v, causal):
    """FlashAttention-4's flash_attn_func; it returns (out, lse)."""
    from flash_attn.cute import flash_attn_func as fa4_func
    result = fa4_func(q, k, v, causal=causal)
    return result[0] if isinstance(result, tuple) else result


def naive_attention(q, k, v, causal):
    """What attention costs without fusion: the (B, H, N, N) scores and
    probabilities live in device memory."""
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        n = q.shape[-2]
        hidden = torch.ones(n, n, dtype=torch.bool, device=q.device).triu_(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    probabilities = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    return torch.matmul(probabilities, v).transpose(1, 2)


def implementation(name):
    if name == "tile":
        return tile_attention
    if name == "naive":
        return naive_attention
    if name == "fa4":
        return fa4_attention
    return sdpa_attention(SDPA_BACKENDS[name])


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def captured(step):
    """step captured once in a CUDA graph, after a warm-up off the capturing
    stream (as torch.cuda.graph asks): a function that replays it."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def median_ms(run, count, target_ms, min_reps=5, max_reps=200):
    """Median time of run(i) (i cycles over `count` input sets), by CUDA
    events; warm-up and repetitions sized from a first estimate."""
    run(0)                                   # loads modules, picks kernels
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(3):
        run(i % count)
    stop.record()
    stop.synchronize()
    estimate = max(start.elapsed_time(stop) / 3, 1e-3)
    for i in range(max(2, int(25 / estimate))):   # about 25 ms of warm-up
        run(i % count)
    reps = max(min_reps, min(max_reps, int(target_ms / estimate)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for i, (begin, end) in enumerate(events):
        begin.record()
        run(i % count)
        end.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) for b, e in events)


def attention_flops(batch, heads, seqlen, head_dim, causal):
    return 4 * batch * heads * seqlen * seqlen * head_dim * (0.5 if causal else 1.0)


def make_sets(count, shape, dtype, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    sets = []
    for _ in range(count):
        q, k, v = (torch.randn(shape, generator=generator, device="cuda", dtype=dtype)
                   .requires_grad_() for _ in range(3))
        dout = torch.randn(shape, generator=generator, device="cuda", dtype=dtype)
        sets.append((q, k, v, dout))
    return sets


def short_reason(error):
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return "out of memory"
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:120]


def free_memory():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def bench_one(name, shape, dtype, causal, sets_count, target_ms, seed):
    """Forward and backward time of one implementation on one shape."""
    batch, seqlen, heads, head_dim = shape
    flops = attention_flops(batch, heads, seqlen, head_dim, causal)
    record = {"impl": name, "dtype": DTYPE_NAMES[dtype], "batch": batch,
              "seqlen": seqlen, "heads": heads, "head_dim": head_dim, "causal": causal,
              "fwd_ms": None, "bwd_ms": None, "fwd_tflops": None, "bwd_tflops": None,
              "fwd_status": "ok", "bwd_status": "ok"}
    attend = implementation(name)
    count = 1 if name in MATERIALISING else sets_count
    sets = outputs = None
    try:
        sets = make_sets(count, shape, dtype, seed)
        ms = median_ms(lambda i: attend(*sets[i][:3], causal), count, target_ms)
        record.update(fwd_ms=ms, fwd_tflops=flops / ms / 1e9)
    except Exception as error:  # noqa: BLE001 - any failure is a recorded n/a
        record["fwd_status"] = short_reason(error)
    try:
        if sets is None:
            raise RuntimeError("no inputs")
        outputs = [attend(*s[:3], causal) for s in sets]

        def backward(i):
            q, k, v, dout = sets[i]
            torch.autograd.grad(outputs[i], (q, k, v), dout, retain_graph=True)
        ms = median_ms(backward, count, target_ms)
        record.update(bwd_ms=ms, bwd_tflops=2.5 * flops / ms / 1e9)
    except Exception as error:  # noqa: BLE001
        record["bwd_status"] = short_reason(error)
    sets = outputs = None   # free the inputs and graphs before the next shape
    free_memory()
    return record


def warm_gpu(seconds):
    """Keeps the GPU busy with fp16 matrix products for `seconds`: the first
    timed shape of a run measured 27-36% slow in its first pass without it
    (docs/performance.md)."""
    if seconds <= 0:
        return
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    started = time.time()
    while time.time() - started < seconds:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()
    del a
    free_memory()


def bench_passes(names, passes, shape, dtype, causal, sets_count, target_ms, seed):
    """[(name, record)] of each implementation on one shape, measured in
    `passes` passes of alternating order; a record's times are the mean of
    its passes' medians (each pass's are kept in "passes"), and a direction
    that failed in any pass is n/a with that pass's reason."""
    runs = {name: [] for name in names}
    for index in range(passes):
        for name in (names if index % 2 == 0 else list(reversed(names))):
            runs[name].append(bench_one(name, shape, dtype, causal, sets_count, target_ms,
                                        seed))
    flops = attention_flops(shape[0], shape[2], shape[1], shape[3], causal)
    out = []
    for name in names:
        record = dict(runs[name][0])
        record["passes"] = [{k: r[k] for k in ("fwd_ms", "bwd_ms")} for r in runs[name]]
        for direction, scale in (("fwd", 1.0), ("bwd", 2.5)):
            failed = [r[f"{direction}_status"] for r in runs[name]
                      if r[f"{direction}_status"] != "ok"]
            if failed:
                record.update({f"{direction}_status": failed[0], f"{direction}_ms": None,
                               f"{direction}_tflops": None})
                continue
            ms = statistics.mean(r[f"{direction}_ms"] for r in runs[name])
            record.update({f"{direction}_ms": ms,
                           f"{direction}_tflops": scale * flops / ms / 1e9})
        out.append((name, record))
    return out


def tile_error(shape, dtype, causal, seed):
    """Relative error of Tile's output against SDPA's fused kernels on the
    same inputs: a guard that the timed kernels compute attention."""
    q, k, v, _ = make_sets(1, shape, dtype, seed)[0]
    with torch.no_grad():
        out = flash_attn_func(q, k, v, causal=causal).float()
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION,
                          SDPBackend.EFFICIENT_ATTENTION]):
            ref = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                is_causal=causal).transpose(1, 2).float()
    error = ((out - ref).norm() / ref.norm()).item()
    del q, k, v, out, ref
    free_memory()
    return error


def graph_replay_ms(attend, shape, dtype, causal, target_ms):
    """(forward, backward) milliseconds of `attend` captured in CUDA graphs:
    the median replay of a captured forward, and that of a captured
    forward + backward less it."""
    (q, k, v, dout), = make_sets(1, shape, dtype, seed=101)

    def forward():
        return attend(q, k, v, causal)

    def forward_backward():
        torch.autograd.grad(attend(q, k, v, causal), (q, k, v), dout)

    times = []
    for step in (forward, forward_backward):
        replay = captured(step)
        times.append(median_ms(lambda i, replay=replay: replay(), 1, target_ms))
    return times[0], times[1] - times[0]


def classic_case(impls, sets_count, target_ms):
    """B=32, N=512, H=16, D=64, causal, fp16: time and peak memory, eager
    and replayed from CUDA graphs."""
    shape, dtype, causal = (32, 512, 16, 64), torch.float16, True
    rows = []
    for name in impls:
        record = bench_one(name, shape, dtype, causal, sets_count, target_ms, seed=99)
        attend = implementation(name)
        try:
            record["graph_fwd_ms"], record["graph_bwd_ms"] = graph_replay_ms(
                attend, shape, dtype, causal, target_ms)
        except Exception as error:  # noqa: BLE001
            record["graph_fwd_ms"] = record["graph_bwd_ms"] = None
            record["graph_status"] = short_reason(error)
        free_memory()
        try:
            (q, k, v, dout), = make_sets(1, shape, dtype, seed=100)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            baseline = torch.cuda.memory_allocated()
            out = attend(q, k, v, causal)
            torch.autograd.grad(out, (q, k, v), dout)
            torch.cuda.synchronize()
            record["peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
            record["extra_peak_mib"] = (torch.cuda.max_memory_allocated() - baseline) / 2**20
            del q, k, v, dout, out
        except Exception as error:  # noqa: BLE001
            record["peak_mib"] = record["extra_peak_mib"] = None
            record["memory_status"] = short_reason(error)
        free_memory()
        rows.append(record)
        print(f"classic {name:15s} fwd {fmt(record['fwd_ms'], 3)} ms  bwd "
              f"{fmt(record['bwd_ms'], 3)} ms  peak {fmt(record['peak_mib'], 0)} MiB  "
              f"graph fwd {fmt(record['graph_fwd_ms'], 3)} ms  bwd "
              f"{fmt(record['graph_bwd_ms'], 3)} ms", flush=True)
    return rows


# --------------------------------------------------------------------------
# Softmax (--softmax)
# --------------------------------------------------------------------------

def softmax_bytes(rows, cols):
    """What a softmax must move: one fp32 read and one fp32 write of the
    matrix."""
    return 2 * rows * cols * 4


def softmax_kernel(bundle, version, cols):
    """The variant tile-run softmax --variant runs: v1 holds a row in one
    block, so the smallest BLOCK_N >= cols; v2-v4 take any width.  None if
    the folder has none."""
    variants = [k for k in bundle.kernels
                if k.family == f"softmax_v{version}" and "tuning" not in k.metadata]
    if version != 1:
        return variants[0] if variants else None
    fitting = [k for k in variants if k.constexprs.get("BLOCK_N", 0) >= cols]
    return min(fitting, key=lambda k: k.constexprs["BLOCK_N"], default=None)


def softmax_implementation(name, bundle, cols):
    """A function (x, y) that writes softmax(x) along rows into y."""
    if name == "torch":
        return lambda x, y: torch.softmax(x, dim=1, out=y)
    kernel = softmax_kernel(bundle, int(name[-1]), cols)
    if kernel is None:
        raise RuntimeError(f"no softmax_v{name[-1]} variant for {cols} columns in "
                           f"{bundle.directory}")

    def run(x, y):
        rows = x.shape[0]
        kernel.launch({"X": runtime.DevicePointer(x.data_ptr(), "fp32"),
                       "Y": runtime.DevicePointer(y.data_ptr(), "fp32"),
                       "x_row_stride": cols, "y_row_stride": cols,
                       "n_rows": rows, "n_cols": cols},
                      x.device.index, torch.cuda.current_stream().cuda_stream)
    return run


def time_in_alternating_passes(names, records, passes, sets, target_ms,
                               implementation, check):
    """Times each implementation named in `names`: `passes` passes, every
    other one in reverse order, each the median of median_ms over the input
    `sets`; its record collects the pass times in "passes".
    implementation(name, record) gives its run(*inputs); check(run, record),
    before the first pass is timed, records how far its output is from the
    reference.  One that fails is recorded n/a (its "status") and skipped
    from then on."""
    for index in range(passes):
        for name in (names if index % 2 == 0 else list(reversed(names))):
            record = records[name]
            if record["status"] != "ok":
                continue
            try:
                run = implementation(name, record)
                if index == 0:
                    check(run, record)
                record["passes"].append(median_ms(lambda i, run=run: run(*sets[i]),
                                                  len(sets), target_ms))
            except Exception as error:  # noqa: BLE001 - any failure is a recorded n/a
                record["status"] = short_reason(error)


def bench_softmax(names, bundle, rows, cols, passes, sets_count, target_ms):
    """[record] of each implementation on one size: `passes` passes of
    alternating order, each time the median of median_ms over `sets_count`
    input sets; a record's time is the mean of its passes'.  Each output is
    compared with torch.softmax first (max_abs_error)."""
    generator = torch.Generator(device="cuda").manual_seed(rows * cols)
    sets = [(torch.randn(rows, cols, generator=generator, device="cuda"),
             torch.empty(rows, cols, device="cuda")) for _ in range(sets_count)]
    expected = torch.softmax(sets[0][0], dim=1)
    records = {name: {"impl": name, "rows": rows, "cols": cols, "passes": [],
                      "ms": None, "gbps": None, "max_abs_error": None, "status": "ok"}
               for name in names}

    def check(run, record):
        x, y = sets[0]
        y.fill_(float("nan"))
        run(x, y)
        record["max_abs_error"] = (y - expected).abs().max().item()

    time_in_alternating_passes(
        names, records, passes, sets, target_ms,
        lambda name, record: softmax_implementation(name, bundle, cols), check)
    out = []
    for name in names:
        record = records[name]
        if record["status"] == "ok":
            record["ms"] = statistics.mean(record["passes"])
            record["gbps"] = softmax_bytes(rows, cols) / (record["ms"] * 1e6)
        out.append(record)
    sets = expected = None
    free_memory()
    return out


def softmax_main(args):
    """--softmax: Tile's softmax kernels and torch.softmax, GB/s."""
    started = time.time()
    bundle = runtime.Bundle(find_kernel_dir())
    device = torch.cuda.get_device_name()
    print(f"device: {device}  tile {tile.__version__}  torch {torch.__version__}  "
          f"kernels {bundle.directory}", flush=True)
    warm_gpu(args.warm_seconds)
    records = []
    for rows, cols in args.sizes:
        for record in bench_softmax(list(SOFTMAX_IMPLEMENTATIONS), bundle, rows, cols,
                                    args.passes, args.sets, args.target_ms):
            records.append(record)
            print(f"softmax {rows}x{cols:<6d} {record['impl']:8s} "
                  f"{fmt(record['gbps']):>7s} GB/s  max |error| "
                  f"{fmt(record['max_abs_error'], 9)}"
                  + ("" if record["status"] == "ok" else f"  ({record['status']})"),
                  flush=True)
    summary = {"device": device, "tile": tile.__version__, "torch": torch.__version__,
               "command": " ".join(sys.argv), "seconds": time.time() - started,
               "passes": args.passes, "sets": args.sets, "kernels": str(bundle.directory),
               "bytes": "2*rows*cols*4: one fp32 read and one fp32 write", "records": records}
    with open(os.path.join(args.out, "softmax_bench.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(args.out, "softmax_bench.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["impl", "rows", "cols", "ms", "gbps",
                                               "max_abs_error", "status"],
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)
    print(f"softmax_bench: {len(records)} measurements in {args.out} "
          f"({time.time() - started:.0f} s)")
    by_key = {(r["impl"], r["rows"], r["cols"]): r for r in records}
    print("\n== softmax GB/s (one fp32 read and one write of the matrix), median")
    print(f"{'size':10s} " + " ".join(f"{name:>8s}" for name in SOFTMAX_IMPLEMENTATIONS))
    for rows, cols in args.sizes:
        print(f"{f'{rows}x{cols}':10s} " + " ".join(
            f"{fmt(by_key[(name, rows, cols)]['gbps']):>8s}" for name in SOFTMAX_IMPLEMENTATIONS))


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

def fmt(value, digits=1):
    return "n/a" if value is None else f"{value:.{digits}f}"


def write_csv(path, records):
    fields = ["impl", "dtype", "head_dim", "heads", "batch", "seqlen", "causal",
              "fwd_ms", "fwd_tflops", "bwd_ms", "bwd_tflops", "fwd_status", "bwd_status",
              "graph_fwd_ms", "graph_bwd_ms", "peak_mib"]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)


def write_plots(out_dir, records, impls):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("attention_bench: matplotlib not found: no plots")
        return []
    written = []
    groups = sorted({(r["dtype"], r["head_dim"], r["causal"]) for r in records})
    for dtype, head_dim, causal in groups:
        for direction in ("fwd", "bwd"):
            fig, ax = plt.subplots(figsize=(6.4, 4.2))
            for name in impls:
                points = sorted((r["seqlen"], r[f"{direction}_tflops"]) for r in records
                                if (r["impl"], r["dtype"], r["head_dim"], r["causal"])
                                == (name, dtype, head_dim, causal)
                                and r[f"{direction}_tflops"] is not None)
                if points:
                    ax.plot(*zip(*points), marker="o", label=name,
                            linewidth=2.5 if name == "tile" else 1.2)
            ax.set_xscale("log", base=2)
            seqlens = sorted({r["seqlen"] for r in records})
            ax.set_xticks(seqlens)
            ax.set_xticklabels([str(n) for n in seqlens])
            ax.minorticks_off()
            ax.set_xlabel("sequence length N (batch * N = 16384)")
            ax.set_ylabel("TFLOP/s")
            ax.set_ylim(bottom=0)
            mask = "causal" if causal else "non-causal"
            ax.set_title(f"attention {direction}, {dtype}, D={head_dim}, "
                         f"H={HEADS.get(head_dim, '?')}, {mask}")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
            path = os.path.join(out_dir, f"attention_{direction}_{dtype}_d{head_dim}_"
                                f"{'causal' if causal else 'noncausal'}.png")
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
    return written


def print_table(records, classic):
    by_key = {(r["impl"], r["dtype"], r["head_dim"], r["causal"], r["seqlen"]): r
              for r in records}
    configs = sorted({(r["dtype"], r["head_dim"], r["causal"], r["seqlen"]) for r in records})

    def tflops(name, config, direction):
        r = by_key.get((name, *config))
        return None if r is None else r[f"{direction}_tflops"]

    def ratio(config, direction, peers):
        tile = tflops("tile", config, direction)
        best = max((t for t in (tflops(p, config, direction) for p in peers) if t),
                   default=None)
        return None if tile is None or not best else tile / best

    short = {"tile": "tile", "fa4": "fa4", "sdpa-cudnn": "cudnn", "sdpa-flash": "fa2",
             "sdpa-efficient": "eff", "sdpa-math": "math", "naive": "naive"}
    impls = [i for i in IMPLEMENTATIONS if any(r["impl"] == i for r in records)]
    print("\n== attention TFLOP/s (forward | backward), median; t/fa2 = Tile / SDPA flash, "
          "t/best = Tile / the faster of cuDNN and FA4")
    head = " ".join(f"{short[i]:>6s}" for i in impls)
    print(f"{'dtype':5s} {'D':>3s} {'mask':6s} {'N':>5s} | {head} {'t/fa2':>6s} "
          f"{'t/best':>6s} | {head} {'t/fa2':>6s} {'t/best':>6s}")
    for config in configs:
        dtype, head_dim, causal, seqlen = config
        cells = []
        for direction in ("fwd", "bwd"):
            cells.append(" ".join(f"{fmt(tflops(i, config, direction)):>6s}" for i in impls)
                         + f" {fmt(ratio(config, direction, [REFERENCE]), 2):>6s}"
                         + f" {fmt(ratio(config, direction, FASTEST_PEERS), 2):>6s}")
        print(f"{dtype:5s} {head_dim:3d} {'causal' if causal else 'full':6s} {seqlen:5d} | "
              f"{cells[0]} | {cells[1]}")
    if classic:
        print("\n== classic case: B=32 N=512 H=16 D=64 causal fp16 (fwd+bwd peak memory; "
              "graph: replayed from a CUDA graph)")
        print(f"{'impl':15s} {'fwd ms':>8s} {'bwd ms':>8s} {'peak MiB':>9s} {'extra MiB':>9s} "
              f"{'graph fwd':>9s} {'graph bwd':>9s}")
        for r in classic:
            print(f"{r['impl']:15s} {fmt(r['fwd_ms'], 3):>8s} {fmt(r['bwd_ms'], 3):>8s} "
                  f"{fmt(r.get('peak_mib'), 0):>9s} {fmt(r.get('extra_peak_mib'), 0):>9s} "
                  f"{fmt(r.get('graph_fwd_ms'), 3):>9s} {fmt(r.get('graph_bwd_ms'), 3):>9s}")


def parse_list(text, kind, allowed=None):
    values = [kind(item) for item in text.split(",") if item]
    if allowed is not None:
        wrong = [v for v in values if v not in allowed]
        if wrong:
            raise argparse.ArgumentTypeError(f"{wrong} not among {list(allowed)}")
    return values


def parse_dims(text, names):
    """"4096x1024,4096x8192" with names ("ROWS", "COLS") ->
    [(4096, 1024), (4096, 8192)]: positive sizes, len(names) each."""
    expected = f"expected {'x'.join(names)},..., not '{text}'"
    try:
        dims = [tuple(int(v) for v in item.split("x")) for item in text.split(",") if item]
    except ValueError:
        raise argparse.ArgumentTypeError(expected) from None
    if not dims or any(len(d) != len(names) or min(d) < 1 for d in dims):
        raise argparse.ArgumentTypeError(expected)
    return dims


def parse_sizes(text):
    """"4096x1024,4096x8192" -> [(4096, 1024), (4096, 8192)]."""
    return parse_dims(text, ("ROWS", "COLS"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tile {tile.__version__}")
    parser.add_argument("--quick", action="store_true",
                        help="fp16 only, N in {1024, 4096} (other options still narrow)")
    parser.add_argument("--dtype", default="fp16,bf16",
                        type=lambda s: parse_list(s, str, DTYPES))
    parser.add_argument("--head-dim", default="64,128",
                        type=lambda s: parse_list(s, int, HEADS))
    parser.add_argument("--n", default=",".join(map(str, SEQLENS)),
                        type=lambda s: parse_list(s, int))
    parser.add_argument("--causal", default="both", choices=("yes", "no", "both"))
    parser.add_argument("--impl", default=",".join(IMPLEMENTATIONS),
                        type=lambda s: parse_list(s, str, IMPLEMENTATIONS))
    parser.add_argument("--target-ms", type=float, default=100.0,
                        help="timed milliseconds per measurement (at least 5 calls)")
    parser.add_argument("--sets", type=int, default=2, help="input sets rotated")
    parser.add_argument("--warm-seconds", type=float, default=1.0,
                        help="matrix products run before the first shape, so that it "
                        "does not meet a GPU still raising its clocks (0: none)")
    parser.add_argument("--passes", type=int, default=2,
                        help="times each shape's implementations run, in alternating "
                        "order (the first pass as listed, the next reversed): one that "
                        "runs right after another runs on a GPU that one has heated, "
                        "so a fixed order favours the first; each time recorded is "
                        "the mean of its passes' medians")
    parser.add_argument("--no-classic", action="store_true", help="skip B=32 N=512 H=16")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="start no new shape after this long (the rest is "
                        "recorded as skipped); the classic case runs first")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"),
                        help="folder for the JSON, CSV and plots")
    parser.add_argument("--softmax", action="store_true",
                        help="time Tile's softmax kernels and torch.softmax (GB/s) "
                        "instead of attention")
    parser.add_argument("--sizes", type=parse_sizes,
                        default=",".join(f"{r}x{c}" for r, c in SOFTMAX_SIZES),
                        help="with --softmax: the fp32 matrices, ROWSxCOLS,...")
    args = parser.parse_args()
    if args.passes < 1 or args.sets < 1:
        parser.error("--passes and --sets must be at least 1")
    if not torch.cuda.is_available():
        sys.exit("attention_bench: no CUDA device")
    if args.softmax:
        os.makedirs(args.out, exist_ok=True)
        softmax_main(args)
        return
    if args.quick:
        args.dtype = [d for d in args.dtype if d == "fp16"] or ["fp16"]
        args.n = [n for n in args.n if n in (1024, 4096)] or [1024, 4096]
    for n in args.n:
        if n < 1 or TOKENS % n:
            parser.error(f"--n {n}: N must divide {TOKENS} (batch * N is fixed)")
    causal_values = {"yes": [True], "no": [False], "both": [False, True]}[args.causal]
    os.makedirs(args.out, exist_ok=True)
    device = torch.cuda.get_device_name()
    print(f"device: {device}  tile {tile.__version__}  torch {torch.__version__}  cudnn "
          f"{torch.backends.cudnn.version()}", flush=True)

    started = time.time()
    warm_gpu(args.warm_seconds)
    classic = [] if args.no_classic else classic_case(args.impl, args.sets, args.target_ms)
    if classic:
        warm_gpu(args.warm_seconds)   # the classic case's small kernels leave it half idle
    records, errors, skipped = [], {}, []
    for dtype_name in args.dtype:
        for head_dim in args.head_dim:
            for causal in causal_values:
                for seqlen in args.n:
                    shape = (TOKENS // seqlen, seqlen, HEADS[head_dim], head_dim)
                    key = f"{dtype_name} d{head_dim} {'causal' if causal else 'full'} N={seqlen}"
                    if args.max_seconds and time.time() - started > args.max_seconds:
                        skipped.append(key)
                        continue
                    if "tile" in args.impl:
                        try:
                            errors[key] = tile_error(shape, DTYPES[dtype_name], causal, 1)
                        except Exception as error:  # noqa: BLE001
                            errors[key] = short_reason(error)
                    for name, record in bench_passes(args.impl, args.passes, shape,
                                                     DTYPES[dtype_name], causal, args.sets,
                                                     args.target_ms, seed=seqlen):
                        records.append(record)
                        print(f"{key:28s} {name:15s} fwd {fmt(record['fwd_tflops']):>6s} "
                              f"bwd {fmt(record['bwd_tflops']):>6s} TFLOP/s"
                              + ("" if record["fwd_status"] == record["bwd_status"] == "ok"
                                 else f"  ({record['fwd_status']} / {record['bwd_status']})"),
                              flush=True)
    if skipped:
        print(f"attention_bench: --max-seconds reached, {len(skipped)} shapes skipped: "
              + ", ".join(skipped))

    summary = {"device": device, "tile": tile.__version__, "torch": torch.__version__,
               "passes": args.passes,
               "cudnn": torch.backends.cudnn.version(), "command": " ".join(sys.argv),
               "seconds": time.time() - started, "flops": "4*B*H*N^2*D, x0.5 causal, "
               "x2.5 backward", "tile_error_vs_sdpa": errors, "records": records,
               "skipped": skipped,
               "classic": classic}
    with open(os.path.join(args.out, "attention_bench.json"), "w") as f:
        json.dump(summary, f, indent=1)
    write_csv(os.path.join(args.out, "attention_bench.csv"), records + classic)
    plots = write_plots(args.out, records, args.impl)
    print(f"attention_bench: {len(records)} measurements, {len(plots)} plots in "
          f"{args.out} ({time.time() - started:.0f} s)")
    worst = max((e for e in errors.values() if isinstance(e, float)), default=None)
    print(f"tile output vs SDPA, worst relative error: {fmt(worst, 5)}"
          + "".join(f"; {k}: {e}" for k, e in errors.items() if not isinstance(e, float)))
    print_table(records, classic)


if __name__ == "__main__":
    main()
