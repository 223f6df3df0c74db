"""flash_attn_with_kvcache on a CUDA device against the float64 reference
(kvcache_reference.py), at decoding shapes: grouped heads (32 query, 8 K/V
heads), ragged cache lengths up to 16k, appended chunks, contiguous and
paged caches, causal multi-token queries, the split heuristic and explicit
split counts.  Marked `gpu`: skipped where no CUDA device is usable (CI);
on the GPU machine test/gpu/run.sh (its part api) runs it from the bundle.
The same checks at small sizes run on the interpreter in test_kvcache.py."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

import kvcache_reference as reference  # noqa: E402
from tile.attention import flash_attn_with_kvcache  # noqa: E402

# Worst |out - reference| for values of size ~1 (P rounded to the input
# type before P V).
OUT_TOLERANCE = {torch.float16: 4e-3, torch.bfloat16: 3e-2}


def _check(seqlens, seqlen_new, dtype=torch.bfloat16, heads=32, heads_k=8, head_dim=128,
           page_size=None, causal=False, window_size=(-1, -1), num_splits=0, seed=0,
           alibi_slopes=None):
    generator = torch.Generator().manual_seed(seed)
    batch = len(seqlens)
    capacity = max(seqlens) + seqlen_new + 7

    def randn(*shape):
        return torch.randn(*shape, generator=generator).to(dtype)

    q = randn(batch, max(seqlen_new, 1), heads, head_dim)
    k = randn(batch, seqlen_new, heads_k, head_dim) if seqlen_new else None
    v = randn(batch, seqlen_new, heads_k, head_dim) if seqlen_new else None
    block_table = None
    if page_size:
        pages = -(-capacity // page_size)
        order = torch.randperm(batch * pages + 5, generator=generator)
        block_table = order[:batch * pages].view(batch, pages).to(torch.int32)
        shape = (batch * pages + 5, page_size, heads_k, head_dim)
    else:
        shape = (batch, capacity, heads_k, head_dim)
    k_cache, v_cache = randn(*shape), randn(*shape)
    lens = torch.tensor(seqlens, dtype=torch.int32)
    want_k, want_v = reference.expected_cache(k_cache, v_cache, k, v, lens, block_table,
                                              None, None, True)
    want_out, want_lse = reference.attention(q, want_k, want_v, lens + seqlen_new,
                                             block_table, causal=causal,
                                             window=window_size, alibi_slopes=alibi_slopes)

    def cuda(t):
        return None if t is None else t.cuda()

    gpu_k_cache, gpu_v_cache = k_cache.cuda(), v_cache.cuda()
    out, lse = flash_attn_with_kvcache(
        q.cuda(), gpu_k_cache, gpu_v_cache, cuda(k), cuda(v), cache_seqlens=lens.cuda(),
        block_table=cuda(block_table), causal=causal, window_size=window_size,
        num_splits=num_splits, alibi_slopes=cuda(alibi_slopes), return_softmax_lse=True)
    torch.cuda.synchronize()
    assert torch.equal(gpu_k_cache.cpu(), want_k) and torch.equal(gpu_v_cache.cpu(), want_v)
    empty = torch.isneginf(want_lse)
    lse = lse.cpu().double()
    assert torch.equal(torch.isneginf(lse), empty)
    error = (out.cpu().double() - want_out).abs().max().item()
    assert error <= OUT_TOLERANCE[dtype], f"out off by {error:.3g}"
    torch.testing.assert_close(lse[~empty], want_lse[~empty], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("num_splits", [0, 1, 7])
@pytest.mark.parametrize("seqlens", [[4000], [1, 63, 1000, 4097]])
def test_one_token_against_a_contiguous_cache(seqlens, num_splits):
    _check(seqlens, 1, num_splits=num_splits, seed=len(seqlens))


@pytest.mark.parametrize("page_size", [16, 64, 256])
def test_paged_cache(page_size):
    _check([17, 300, 2049], 2, page_size=page_size, causal=True, seed=page_size)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [64, 96, 128])
def test_causal_chunks_and_windows(dtype, head_dim):
    _check([0, 500, 3000], 5, dtype=dtype, head_dim=head_dim, causal=True,
           window_size=(700, 0), num_splits=3, seed=head_dim)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_alibi(head_dim):
    slopes = torch.rand(2, 32, generator=torch.Generator().manual_seed(head_dim)) * 0.3
    _check([700, 2500], 3, dtype=torch.float16, head_dim=head_dim, causal=True,
           num_splits=3, seed=head_dim + 1, alibi_slopes=slopes)


@pytest.mark.parametrize("page_size", [None, 16])
def test_long_chunk_at_a_ragged_head_dim(page_size):
    """40 new tokens (three programs of kv_append, the last partial) across
    pages, head dim 80: appended in place, read through a padded copy."""
    _check([0, 37, 900], 40, head_dim=80, page_size=page_size, causal=True, seed=5)


def test_long_cache_split_by_the_heuristic():
    _check([16384], 1, page_size=64, seed=3)


def test_cuda_graph_replay_reads_the_new_lengths():
    """Captured once, replayed after the lengths moved: no host sync or
    host-side length in the call."""
    q = torch.randn(2, 1, 32, 128, device="cuda", dtype=torch.bfloat16)
    k_cache = torch.randn(2, 512, 8, 128, device="cuda", dtype=torch.bfloat16)
    v_cache = torch.randn_like(k_cache)
    lens = torch.tensor([100, 200], dtype=torch.int32, device="cuda")

    def step():
        return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, num_splits=4)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    lens.copy_(torch.tensor([300, 17], dtype=torch.int32))
    graph.replay()
    torch.cuda.synchronize()
    want, _ = reference.attention(q.cpu(), k_cache.cpu(), v_cache.cpu(), [300, 17])
    assert (out.cpu().double() - want).abs().max().item() <= OUT_TOLERANCE[torch.bfloat16]
