#!/usr/bin/env python3
"""The host time of ``kernel[grid](...)`` on the GPU path, measured on a
machine without a GPU: the Python work of a launch after the first
(compiling) call, down to the runtime's launch call, which is replaced by
a no-op.

    PYTHONPATH=python python3 benchmarks/launch_overhead.py [--calls 20000]

Calls examples/pytorch_launch.py's kernels as Triton's tutorials do: the
softmax (tutorial 02: eight run-time arguments, a fixed grid), the vector
add (tutorial 01: a grid function of the meta-parameters), and that vector
add under @tile.autotune (three configs, key n_elements, as
test/gpu/check_jit_launch.py's) and under @tile.heuristics (its block
computed from n_elements each call).  The tensors are CPU tensors that say
they are on cuda:0 (a torch.Tensor subclass), and what needs the CUDA
driver is replaced: the device's compute capability (9.0), the current
stream (0) and the runtime's tileLaunchGrid (returns success).  The first
call compiles for sm_90a (tile-compile, as the launcher finds it; the
autotuned kernel compiles its three configs, timed by a stand-in timer);
the rest are timed: the median of --repeats rounds of --calls calls, in
microseconds a call.

Then flash_attn_with_kvcache (--decode; the bundle's decoding kernels:
TILE_KERNEL_DIR or the build folder's): batch 1, 32 query and 8 K/V
heads, d128, a 4096-token cache, one token appended, the runtime's checks
of both launches run; the tensors PyTorch allocates on "cuda" are the
same lookalikes, so its allocator's time and the driver's are left out.

What this leaves out: the ctypes call into libtile_runtime.so, its
argument checks and the driver's cuLaunchKernel, which the GPU machine's
scripts/gpu/jit_launch_overhead.py times with the rest.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import tile  # noqa: E402
from tile import runtime  # noqa: E402
from tile.compile import load_module  # noqa: E402

CUDA0 = torch.device("cuda", 0)


class CudaLookalike(torch.Tensor):
    """A CPU tensor that says it is on cuda:0 (its address is a real one,
    so the pointers' alignment is what it would be)."""

    # Plain tensor speed: no __torch_function__ dispatch for the subclass.
    __torch_function__ = torch._C._disabled_torch_function_impl
    device = property(lambda self: CUDA0)
    is_cuda = property(lambda self: True)


# The autotuner tells a tensor by its type's name (it imports no PyTorch):
# named so, the lookalikes key and tune as CUDA tensors do.
CudaLookalike.__name__ = "Tensor"


def on_cuda(tensor):
    return tensor.as_subclass(CudaLookalike)


def without_the_driver():
    """Replaces what needs the CUDA driver; returns the count of launches
    the runtime was asked for (a one-element list)."""
    launches = [0]

    def launch_grid(*args):
        launches[0] += 1
        return 0

    torch.cuda.get_device_capability = lambda device=None: (9, 0)
    torch.cuda.current_device = lambda: 0
    torch._C._cuda_getCurrentRawStream = lambda index: 0
    runtime.library().tileLaunchGrid = launch_grid
    return launches


def allocating_lookalikes():
    """PyTorch's factory functions, asked for a CUDA tensor, make a CPU
    lookalike; the stream calls the decoding path makes do nothing."""
    def on_cpu(factory):
        def make(*args, **kwargs):
            device = kwargs.get("device")
            if device is None or torch.device(device).type != "cuda":
                return factory(*args, **kwargs)
            return on_cuda(factory(*args, **{**kwargs, "device": "cpu"}))
        return make

    for name in ("empty", "empty_strided", "arange", "full", "zeros", "tensor"):
        setattr(torch, name, on_cpu(getattr(torch, name)))

    class Stream:
        def synchronize(self):
            pass

    torch.cuda.current_stream = lambda device=None: Stream()
    torch.cuda.is_current_stream_capturing = lambda: False
    runtime.multiprocessor_count = lambda device: 132


def decode_call():
    """One flash_attn_with_kvcache call on lookalikes, as described above."""
    from tile.attention import flash_attn_with_kvcache
    generator = torch.Generator().manual_seed(0)

    def randn(*shape):
        return on_cuda(torch.randn(*shape, generator=generator).half())

    q, k, v = randn(1, 1, 32, 128), randn(1, 1, 8, 128), randn(1, 1, 8, 128)
    k_cache, v_cache = randn(1, 4096, 8, 128), randn(1, 4096, 8, 128)
    lengths = on_cuda(torch.tensor([4000], dtype=torch.int32))
    return lambda: flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lengths)


def per_call(call, calls, repeats):
    """Microseconds a call: the median of `repeats` rounds."""
    rounds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(rounds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--decode", action="store_true",
                        help="time flash_attn_with_kvcache instead")
    options = parser.parse_args()

    launches = without_the_driver()
    if options.decode:
        # The first call takes the whole path (tileLaunch), the rest the
        # plan it made (tileLaunchGrid).
        runtime.library().tileLaunch = runtime.library().tileLaunchGrid
        allocating_lookalikes()
        call = decode_call()
        call()
        before = launches[0]
        call()
        assert launches[0] == before + 2, "the launches did not reach the runtime"
        print(f"flash_attn_with_kvcache, one token, batch 1: "
              f"{per_call(call, options.calls, options.repeats):.2f} us a call")
        return
    example = load_module(os.path.join(REPO, "examples", "pytorch_launch.py"))

    x = on_cuda(torch.randn(64, 1000))
    y = on_cuda(torch.empty(64, 1000))
    softmax_args = (y, x, x.stride(0), y.stride(0), *x.shape)
    softmax = example.softmax_kernel[(64,)]

    def softmax_call():
        softmax(*softmax_args, BLOCK_SIZE=1024, NUM_STAGES=1, num_warps=4)

    a, b, out = (on_cuda(torch.randn(5000)) for _ in range(3))
    n = out.numel()

    def add_call():
        example.add_kernel[lambda meta: (-(-n // meta["BLOCK_SIZE"]),)](
            a, b, out, n, BLOCK_SIZE=1024)

    # The autotuned vector add: three configs, the first timed fastest (the
    # stand-in timer runs each once, as a real one would, and ranks them by
    # their order).
    configs = [tile.Config({"BLOCK_SIZE": block}, num_warps=warps)
               for block, warps in ((256, 2), (1024, 4), (4096, 8))]
    tuned_add = tile.autotune(configs=configs, key=["n_elements"],
                              timer=lambda trial: trial.run() or configs.index(trial.config))(
        tile.jit(example.add_kernel.fn))

    def tuned_add_call():
        tuned_add[lambda meta: (-(-n // meta["BLOCK_SIZE"]),)](a, b, out, n)

    heuristic_add = tile.heuristics(
        {"BLOCK_SIZE": lambda args: min(tile.next_power_of_2(args["n_elements"]), 1024)})(
        tile.jit(example.add_kernel.fn))

    def heuristic_add_call():
        heuristic_add[lambda meta: (-(-n // meta["BLOCK_SIZE"]),)](a, b, out, n)

    for name, call in (("softmax (tutorial 02)", softmax_call),
                       ("vector add, grid function (tutorial 01)", add_call),
                       ("vector add, @tile.autotune of 3 configs", tuned_add_call),
                       ("vector add, @tile.heuristics", heuristic_add_call)):
        call()   # compiles (and tunes)
        before = launches[0]
        call()
        assert launches[0] == before + 1, "the launch did not reach the runtime"
        print(f"{name}: {per_call(call, options.calls, options.repeats):.2f} us a call")


if __name__ == "__main__":
    main()
