#!/usr/bin/env python3
"""Ring, striped and step attention with Tile's kernels over NCCL, timed:
one process per GPU, against one GPU's flash_attn_func on the same total
sequence length.

fp16, batch 1, H=32 at D=64 and 16 at D=128, N = 32768, 65536 and 131072
in all, causal and not.  A step is done when every rank is (in causal ring
attention rank 0 has the least work), so each call is timed between a
barrier and CUDA events and the slowest rank's time counts: the median of
5 of those, forward and forward + backward (the backward is their
difference).  Speed-up = (1-GPU fwd + bwd) / (fwd + bwd).  The checks of
the same functions are test/gpu/check_ring_attention.py.

    python3 benchmarks/ring_attention_bench.py [--gpus N]

Prints one table.
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from tile.attention import flash_attn_func, ring  # noqa: E402

FUNCTIONS = {ring.RING: ring.ring_attn_func, ring.STRIPED: ring.striped_attn_func,
             ring.STEP: ring.step_attn_func}


def time_ms(function, reps=5):
    """Median over reps of the slowest rank's time: a step is done when
    every rank is (in causal ring attention rank 0 has the least work)."""
    function()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        dist.barrier()
        start.record()
        function()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    slowest = torch.tensor(times, device=torch.cuda.current_device(), dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return sorted(slowest.tolist())[len(times) // 2]


def bench_case(rank, world, layout, total_n, head_dim, causal):
    device = torch.device("cuda", rank)
    heads = 32 if head_dim == 64 else 16
    local = (1, total_n // world, heads, head_dim)
    q, k, v, dout = (torch.randn(local, device=device, dtype=torch.float16) for _ in range(4))
    q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
    function = FUNCTIONS[layout]
    fwd = time_ms(lambda: function(q, k, v, causal=causal))

    def fwd_bwd():
        out = function(q, k, v, causal=causal)
        out.backward(dout)
    total = time_ms(fwd_bwd)
    return fwd, total - fwd


def single_gpu(total_n, head_dim, causal):
    heads = 32 if head_dim == 64 else 16
    shape = (1, total_n, heads, head_dim)
    q, k, v, dout = (torch.randn(shape, device="cuda:0", dtype=torch.float16) for _ in range(4))
    q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run(backward):
        out = flash_attn_func(q, k, v, causal=causal)
        if backward:
            out.backward(dout)
    result = []
    for backward in (False, True):
        run(backward)
        times = []
        for _ in range(5):
            start.record()
            run(backward)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        result.append(sorted(times)[2])
    return result[0], result[1] - result[0]


def worker(rank, world, init_file, queue):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    timings = []
    for total_n in (32768, 65536, 131072):
        for head_dim in (64, 128):
            for causal in (False, True):
                for layout in (ring.RING, ring.STRIPED, ring.STEP):
                    fwd, bwd = bench_case(rank, world, layout, total_n, head_dim, causal)
                    timings.append((total_n, head_dim, causal, layout, fwd, bwd))
    if rank == 0:
        queue.put(timings)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    args = parser.parse_args()
    if args.gpus < 2:
        sys.exit(f"ring_attention_bench: needs 2 or more GPUs, found {args.gpus}")
    context = mp.get_context("spawn")
    queue = context.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        processes = [context.Process(target=worker,
                                     args=(r, args.gpus, os.path.join(tmp, "init"), queue))
                     for r in range(args.gpus)]
        for p in processes:
            p.start()
        timings = queue.get()
        for p in processes:
            p.join()
    print(f"\n== time per step (ms, fp16, median of 5 of the slowest rank) on {args.gpus} "
          f"GPUs, against flash_attn_func on one GPU, same total N")
    print("N       D   mask    layout    fwd      bwd      1-GPU fwd 1-GPU bwd speed-up")
    single = {}
    for total_n, head_dim, causal, layout, fwd, bwd in timings:
        key = (total_n, head_dim, causal)
        if key not in single:
            single[key] = single_gpu(total_n, head_dim, causal)
        sf, sb = single[key]
        print(f"{total_n:<7} {head_dim:<3} {'causal' if causal else 'full':7} {layout:8} "
              f"{fwd:8.2f} {bwd:8.2f} {sf:9.2f} {sb:9.2f} {(sf + sb) / (fwd + bwd):6.2f}x")


if __name__ == "__main__":
    main()
