"""The host cost of flash_attn_func calls, against the GPU time they buy.

On the classic shape (B=32, N=512, H=16, D=64, causal, fp16) the kernels
take a few hundred microseconds, so the Python runtime's launch path can
decide the time a caller sees.

    python3 launch_overhead.py [PYTHON_DIR] [--line-only]

PYTHON_DIR holds the `tile` package to time (default: the bundle's
`python`; an older one can be unpacked beside it with
`git archive REV python/tile | tar -x`). Prints one line: for Tile's
forward (inputs requiring grad, and not), its forward + backward through
autograd, and SDPA's flash backend timed in the same process (the host's
speed drifts between processes: compare ratios), the CPU microseconds a
call takes to return with calls made back to back / the GPU microseconds
between events around them. To compare two copies, run them alternately
with --line-only, one process each. Without it, then: the same calls
captured once in a CUDA graph and replayed (no host work between kernels),
and where the forward's and the backward's Python paths spend their time,
under cProfile.
"""

import cProfile
import pstats
import sys
import time

ARGS = [a for a in sys.argv[1:] if a != "--line-only"]
sys.path.insert(0, ARGS[0] if ARGS else "python")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from tile.attention import flash_attn_func  # noqa: E402
from tile.attention.functional import _flash_attn_backward, _forward  # noqa: E402

SHAPE = (32, 512, 16, 64)


def back_to_back(call, calls=400):
    """(host, events) microseconds a call, after a warm-up."""
    for _ in range(30):
        call()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start = time.perf_counter()
    begin.record()
    for _ in range(calls):
        call()
    end.record()
    host = time.perf_counter() - start
    end.synchronize()
    return 1e6 * host / calls, 1e3 * begin.elapsed_time(end) / calls


def graph_replay_us(call):
    """Microseconds a replay of `call` captured in a CUDA graph (warmed up on
    a side stream first, as torch.cuda.graph asks)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return back_to_back(graph.replay)[1]


def main():
    q, k, v = (torch.randn(SHAPE, device="cuda", dtype=torch.float16, requires_grad=True)
               for _ in range(3))
    plain = [t.detach() for t in (q, k, v)]
    dout = torch.randn(SHAPE, device="cuda", dtype=torch.float16)

    def tile_call(backward, inputs=(q, k, v)):
        def call():
            out = flash_attn_func(*inputs, causal=True)
            if backward:
                torch.autograd.grad(out, (q, k, v), dout)
        return call

    def sdpa_call(backward):
        def call():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                out = F.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            if backward:
                torch.autograd.grad(out, (q, k, v), dout.transpose(1, 2))
        return call

    calls = [("tile fwd", tile_call(False)), ("tile fwd no-grad", tile_call(False, plain)),
             ("tile fwd+bwd", tile_call(True)), ("sdpa-flash fwd", sdpa_call(False)),
             ("sdpa-flash fwd+bwd", sdpa_call(True))]
    cells = []
    for label, call in calls:
        host, events = back_to_back(call, 200 if label.endswith("bwd") else 400)
        cells.append(f"{label} {host:6.1f} /{events:6.1f}")
    print(f"{ARGS[0] if ARGS else 'python'}  host/events us:  " + "  ".join(cells),
          flush=True)
    if "--line-only" in sys.argv:
        return

    print(f"\n{'replayed from a CUDA graph':26s} {'us':>8s}")
    for label, call in calls:
        if "no-grad" not in label:
            print(f"{label:26s} {graph_replay_us(call):8.1f}", flush=True)

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(400):
        flash_attn_func(q, k, v, causal=True)
    profile.disable()
    torch.cuda.synchronize()
    print("\nflash_attn_func forward (inputs requiring grad), 400 calls under cProfile:")
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)

    with torch.no_grad():
        out, lse, *_ = _forward(q, k, v, True, SHAPE[-1] ** -0.5)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(200):
        _flash_attn_backward(dout, q, k, v, out, lse, True, None)
    profile.disable()
    torch.cuda.synchronize()
    print("\n_flash_attn_backward, 200 calls under cProfile:")
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
