"""Host time of one copy of the Python runtime on the classic shape
(B=32, N=512, H=16, D=64, causal, fp16), for comparing two copies.

    python3 host_time_ab.py PYTHON_DIR

PYTHON_DIR holds a `tile` package (the bundle's `python`, or an older one
unpacked beside it with `git archive REV python/tile | tar -x`). Prints one
line: for Tile's forward (inputs requiring grad, and not), its forward +
backward through autograd, and SDPA's flash backend timed in the same
process (the host's speed drifts between processes: compare ratios), the
CPU microseconds a call takes to return with calls made back to back, and
the GPU microseconds between events around them. Run copies alternately,
one process each.
"""

import sys
import time

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from tile.attention import flash_attn_func  # noqa: E402

SHAPE = (32, 512, 16, 64)


def back_to_back(call, calls=400):
    """'host / events' microseconds a call."""
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
    return f"{1e6 * host / calls:6.1f} /{1e3 * begin.elapsed_time(end) / calls:6.1f}"


def main():
    q, k, v = (torch.randn(SHAPE, device="cuda", dtype=torch.float16, requires_grad=True)
               for _ in range(3))
    plain = [t.detach() for t in (q, k, v)]
    dout = torch.randn(SHAPE, device="cuda", dtype=torch.float16)

    def tile_backward():
        torch.autograd.grad(flash_attn_func(q, k, v, causal=True), (q, k, v), dout)

    def sdpa(backward):
        def call():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                out = F.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            if backward:
                torch.autograd.grad(out, (q, k, v), dout.transpose(1, 2))
        return call

    print(f"{sys.argv[1]:11s} host/events us:  fwd "
          f"{back_to_back(lambda: flash_attn_func(q, k, v, causal=True))}"
          f"  fwd no-grad {back_to_back(lambda: flash_attn_func(*plain, causal=True))}"
          f"  fwd+bwd {back_to_back(tile_backward, 200)}"
          f"  | sdpa-flash fwd {back_to_back(sdpa(False))}"
          f"  fwd+bwd {back_to_back(sdpa(True), 200)}", flush=True)


if __name__ == "__main__":
    main()
