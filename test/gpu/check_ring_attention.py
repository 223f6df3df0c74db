#!/usr/bin/env python3
"""Ring, striped and step attention with Tile's kernels over NCCL, one
process per GPU, against single-GPU attention computed in float32 by
PyTorch's SDPA (math backend) on the whole sequence.

Each rank builds the same full q, k, v and output gradient (one seed), cuts
its shard with shard_sequence, runs the sequence-parallel forward and
backward, and compares its out, dq, dk and dv with the matching shard of the
reference: normwise relative error within 4 (output) or 8 (gradients) unit
roundoffs, as check_flash_attn_api.py.  test/gpu/run.sh runs it where two
or more GPUs are visible; benchmarks/ring_attention_bench.py times the
same functions.

    python3 test/gpu/check_ring_attention.py [--gpus N] [--junit FILE]

Prints one line per case; exits 1 if a case failed.
"""

import argparse
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import junit  # beside this file, as the API check

# The API check's tolerances and error measure; importing it also puts
# tile's Python sources on the path.
from check_flash_attn_api import limit, relative_error
from tile.attention import ring

FUNCTIONS = {ring.RING: ring.ring_attn_func, ring.STRIPED: ring.striped_attn_func,
             ring.STEP: ring.step_attn_func}


def reference(q, k, v, dout, causal):
    """Out and gradients in float32 on the whole sequence ((B, N, H, D))."""
    q, k, v = (t.float().transpose(1, 2).requires_grad_() for t in (q, k, v))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.backward(dout.float().transpose(1, 2))
    return [t.transpose(1, 2) for t in (out.detach(), q.grad, k.grad, v.grad)]


def check_case(rank, world, layout, dtype, head_dim, causal, local_n, seed):
    device = torch.device("cuda", rank)
    generator = torch.Generator(device=device).manual_seed(seed)
    shape = (1, local_n * world, 4, head_dim)
    q, k, v, dout = (torch.randn(shape, device=device, dtype=dtype, generator=generator)
                     for _ in range(4))
    expected = reference(q, k, v, dout, causal)
    shard = lambda t: ring.shard_sequence(t, layout, rank, world).contiguous()  # noqa: E731
    ql, kl, vl = (shard(t).requires_grad_() for t in (q, k, v))
    out = FUNCTIONS[layout](ql, kl, vl, causal=causal)
    out.backward(shard(dout))
    errors = [relative_error(got, shard(ref)) for got, ref in
              zip((out.detach(), ql.grad, kl.grad, vl.grad), expected)]
    limits = [limit(dtype, gradient=False)] + [limit(dtype, gradient=True)] * 3
    ok = all(e <= lim for e, lim in zip(errors, limits))
    # Every rank must pass for the case to pass.
    flag = torch.tensor([0 if ok else 1], device=device)
    dist.all_reduce(flag)
    worst = torch.tensor(errors, device=device, dtype=torch.float64)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return flag.item() == 0, worst.tolist()


def worker(rank, world, init_file, queue):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    lines, failures, seed = [], 0, 0
    for layout in (ring.RING, ring.STRIPED, ring.STEP):
        for dtype in (torch.float16, torch.bfloat16):
            for head_dim in (64, 128):
                for causal in (False, True):
                    # 1000 and 334 rows per rank: not multiples of the blocks.
                    for local_n in (334, 1000):
                        seed += 1
                        ok, worst = check_case(rank, world, layout, dtype, head_dim,
                                               causal, local_n, seed)
                        failures += not ok
                        lines.append(f"{'ok  ' if ok else 'FAIL'} {layout:8} "
                                     f"{str(dtype)[6:]:8} d{head_dim:<3} "
                                     f"{'causal' if causal else 'full':6} N={local_n * world:<6}"
                                     f" err out {worst[0]:.1e} dq {worst[1]:.1e} "
                                     f"dk {worst[2]:.1e} dv {worst[3]:.1e}")
                        if rank == 0:   # as it comes, should a later case crash
                            print(lines[-1], flush=True)
    if rank == 0:
        queue.put((lines, failures))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--junit", metavar="FILE",
                        help="also write one JUnit test case a check here")
    args = parser.parse_args()
    if args.gpus < 2:
        sys.exit(f"check_ring_attention: needs 2 or more GPUs, found {args.gpus}")
    context = mp.get_context("spawn")
    queue = context.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        processes = [context.Process(target=worker,
                                     args=(r, args.gpus, os.path.join(tmp, "init"), queue))
                     for r in range(args.gpus)]
        for p in processes:
            p.start()
        lines, failures = queue.get()
        for p in processes:
            p.join()
    if args.junit:
        # Each line: "ok  " or "FAIL", the case, its errors.
        junit.write(args.junit, "ring_attention",
                    [(f"{args.gpus} GPUs {line[5:].split(' err ')[0].strip()}",
                      line.startswith("ok"), line) for line in lines])
    print(f"\nring attention on {args.gpus} GPUs: {len(lines) - failures} of "
          f"{len(lines)} cases passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
