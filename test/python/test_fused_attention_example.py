"""examples/fused_attention.py, tutorial 06's fused attention in Triton's
vocabulary, launched on CPU tensors (the interpreter): forward and
backward against float64 at a length no block size divides.  The GPU
runs it in test/gpu/check_jit_launch.py."""

import math
import os

import pytest

torch = pytest.importorskip("torch")

from conftest import REPO  # noqa: E402
from tile.compile import load_module  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")

EXAMPLE = load_module(os.path.join(REPO, "examples", "fused_attention.py"))


def reference(q, k, v, do, causal, sm_scale):
    q, k, v, do = (t.double().requires_grad_(t is not do) for t in (q, k, v, do))
    scores = q @ k.transpose(-1, -2) * sm_scale
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    out = torch.softmax(scores, dim=-1) @ v
    out.backward(do)
    return out.detach(), q.grad, k.grad, v.grad


@pytest.mark.parametrize("causal", [False, True])
def test_forward_and_backward_match_float64(causal):
    torch.manual_seed(int(causal))
    shape = (1, 2, 77, 32)
    q, k, v = (torch.randn(shape, dtype=torch.float16, requires_grad=True) for _ in range(3))
    do = torch.randn(shape, dtype=torch.float16)
    sm_scale = 0.3
    blocks = {"fwd": (32, 16), "bwd": (16, 32, 32, 16)}
    out = EXAMPLE.attention(q, k, v, causal, sm_scale, blocks)
    out.backward(do)
    want = reference(q.detach(), k.detach(), v.detach(), do, causal, sm_scale)
    for got, expected in zip((out, q.grad, k.grad, v.grad), want):
        error = ((got.double() - expected).abs() / (expected.abs() + 1)).max().item()
        assert error < 4e-3, error
