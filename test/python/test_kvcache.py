"""flash_attn_with_kvcache on CPU tensors: the decoding kernels
(python/tile/kernels/decode.py, the manifest's variants) run on the
interpreter, against a float64 reference (kvcache_reference.py) at ragged
cache lengths that are not multiples of the key block, appended chunks,
grouped heads, splits, paged caches, causal multi-token queries, windows,
softcap, rotary and cache_batch_idx; the in-place append; the split
heuristic; and the errors."""

import math

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

import kvcache_reference as reference  # noqa: E402
from runtime_stand_in import RuntimeStandIn  # noqa: E402
from tile.attention import flash_attn_with_kvcache, kvcache  # noqa: E402
from tile.kernels import manifest  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")

# Worst |out - reference| allowed: P is rounded to the input type before
# P V, so a few units of its roundoff on values of size ~1.
OUT_TOLERANCE = {torch.float16: 4e-3, torch.bfloat16: 3e-2}


def randn(generator, *shape, dtype=torch.float16):
    return torch.randn(*shape, generator=generator).to(dtype)


class Case:
    """Random inputs of one call: q (batch, seqlen_q, heads, head_dim), a
    cache of `capacity` tokens a sequence (paged in pages of page_size
    through a shuffled block table, or rows of a contiguous cache, picked
    by cache_batch_idx when batch_rows is given), cache lengths `seqlens`
    and seqlen_new appended tokens."""

    def __init__(self, seqlens, heads_k=2, group=4, head_dim=64, seqlen_q=1, seqlen_new=0,
                 capacity=None, page_size=None, batch_rows=None, dtype=torch.float16,
                 rotary_dim=0, seed=0):
        generator = torch.Generator().manual_seed(seed)
        batch = len(seqlens)
        self.dtype = dtype
        self.seqlens = torch.tensor(seqlens, dtype=torch.int32)
        capacity = capacity or max(seqlens) + seqlen_new + 5
        self.q = randn(generator, batch, seqlen_q, heads_k * group, head_dim, dtype=dtype)
        self.k = self.v = None
        if seqlen_new:
            self.k = randn(generator, batch, seqlen_new, heads_k, head_dim, dtype=dtype)
            self.v = randn(generator, batch, seqlen_new, heads_k, head_dim, dtype=dtype)
        self.block_table = self.batch_idx = None
        if page_size:
            pages_per_seq = -(-capacity // page_size)
            pool = batch * pages_per_seq + 3
            shape = (pool, page_size, heads_k, head_dim)
            order = torch.randperm(pool, generator=generator)[:batch * pages_per_seq]
            self.block_table = order.view(batch, pages_per_seq).to(torch.int32)
        else:
            rows = batch if batch_rows is None else len(batch_rows)
            shape = (rows if batch_rows is None else max(batch_rows) + 2, capacity, heads_k,
                     head_dim)
            if batch_rows is not None:
                self.batch_idx = torch.tensor(batch_rows, dtype=torch.int32)
        self.k_cache = randn(generator, *shape, dtype=dtype)
        self.v_cache = randn(generator, *shape, dtype=dtype)
        self.rotary = None
        if rotary_dim:
            angles = torch.rand(capacity + 4, rotary_dim // 2, generator=generator) * 6.3
            self.rotary = (angles.cos(), angles.sin())

    def run(self, **options):
        """(out, lse, k_cache, v_cache) of the API on copies of the caches."""
        k_cache, v_cache = self.k_cache.clone(), self.v_cache.clone()
        cos, sin = self.rotary or (None, None)
        out, lse = flash_attn_with_kvcache(
            self.q, k_cache, v_cache, self.k, self.v, rotary_cos=cos, rotary_sin=sin,
            cache_seqlens=self.seqlens, cache_batch_idx=self.batch_idx,
            block_table=self.block_table, return_softmax_lse=True, **options)
        return out, lse, k_cache, v_cache

    def check(self, causal=False, window_size=(-1, -1), softcap=0.0, interleaved=True,
              alibi_slopes=None, **options):
        out, lse, k_cache, v_cache = self.run(causal=causal, window_size=window_size,
                                              softcap=softcap, alibi_slopes=alibi_slopes,
                                              rotary_interleaved=interleaved, **options)
        want_k, want_v = reference.expected_cache(
            self.k_cache, self.v_cache, self.k, self.v, self.seqlens, self.block_table,
            self.batch_idx, self.rotary, interleaved)
        # The append is exact but for the rotation, which the API rounds
        # from fp32 and the reference from float64.
        ulp = 2.0**-7 if self.dtype == torch.bfloat16 else 2.0**-10
        torch.testing.assert_close(k_cache.double(), want_k.double(), rtol=ulp,
                                   atol=ulp if self.rotary else 0)
        assert torch.equal(v_cache, want_v)
        seqlen_new = 0 if self.k is None else self.k.shape[1]
        want_out, want_lse = reference.attention(
            self.q, want_k, want_v, self.seqlens + seqlen_new, self.block_table,
            self.batch_idx, options.get("softmax_scale"), causal, window_size, softcap,
            self.rotary, self.seqlens, interleaved, alibi_slopes)
        assert out.dtype == self.q.dtype and out.shape == self.q.shape
        empty = torch.isneginf(want_lse)
        assert torch.equal(torch.isneginf(lse), empty), "rows that see no key: lse -inf"
        assert (out.double().abs().amax(-1).transpose(1, 2)[empty] == 0).all()
        error = (out.double() - want_out).abs().max().item()
        assert error <= OUT_TOLERANCE[self.dtype], f"out off by {error:.3g}"
        torch.testing.assert_close(lse[~empty].double(), want_lse[~empty], rtol=1e-4,
                                   atol=1e-4)
        return out


# --------------------------------------------------------------------------
# Against the float64 reference, on the interpreter
# --------------------------------------------------------------------------

@pytest.mark.parametrize("group", [1, 4, 8])
@pytest.mark.parametrize("num_splits", [1, 3])
def test_ragged_cache_lengths(group, num_splits):
    """Lengths 1, below, at and past the 64-key block, one new token."""
    Case([0, 63, 64, 130], group=group, seqlen_new=1, seed=group).check(
        num_splits=num_splits)


@pytest.mark.parametrize("seqlen_new, num_splits", [(1, 1), (3, 2), (5, 5)])
def test_appended_chunks_without_mask(seqlen_new, num_splits):
    """seqlen_q new tokens appended and attending to the whole cache."""
    Case([1, 77, 200], group=2, seqlen_q=seqlen_new, seqlen_new=seqlen_new,
         seed=seqlen_new).check(num_splits=num_splits)


@pytest.mark.parametrize("group, seqlen_q, num_splits", [(4, 3, 1), (8, 4, 3), (8, 9, 2)])
def test_causal_multi_token(group, seqlen_q, num_splits):
    """Bottom-right causal: token t sees keys up to its own.  8 x 9 = 72
    rows a K/V head take two 64-row blocks; one sequence holds fewer keys
    than tokens (its first tokens see none)."""
    Case([0, 40, 101], heads_k=1, group=group, seqlen_q=seqlen_q, seqlen_new=seqlen_q - 1,
         seed=seqlen_q).check(causal=True, num_splits=num_splits)


@pytest.mark.parametrize("page_size, seqlen_new, num_splits", [
    (16, 1, 1), (16, 3, 4), (64, 2, 2), (64, 1, 7)])
def test_paged_cache(page_size, seqlen_new, num_splits):
    """Pages in shuffled order: a 64-key block spans four 16-token pages;
    appended tokens cross page boundaries."""
    Case([15, 16, 50, 129], group=4, seqlen_q=seqlen_new, seqlen_new=seqlen_new,
         page_size=page_size, seed=page_size + seqlen_new).check(
             causal=seqlen_new > 1, num_splits=num_splits)


def test_cache_batch_idx():
    Case([30, 5, 90], group=4, seqlen_new=2, seqlen_q=2, batch_rows=[4, 0, 2],
         seed=7).check(causal=True, num_splits=2)


@pytest.mark.parametrize("window_size, causal, softcap", [
    ((20, 0), False, 0.0), ((33, -1), True, 0.0), ((10, 3), False, 0.0),
    ((-1, -1), True, 5.0), ((25, 0), False, 8.0)])
def test_windows_and_softcap(window_size, causal, softcap):
    Case([3, 70, 150], group=4, seqlen_q=4, seqlen_new=4, seed=11).check(
        causal=causal, window_size=window_size, softcap=softcap, num_splits=3)


@pytest.mark.parametrize("slopes_shape, causal, window_size, page_size", [
    ((8,), False, (-1, -1), None), ((3, 8), True, (-1, -1), 16),
    ((8,), True, (30, 0), None)])
def test_alibi(slopes_shape, causal, window_size, page_size):
    """ALiBi: each row's slope is its query head's (the heads of a group in
    one program), its distance from its token's diagonal."""
    slopes = torch.rand(slopes_shape, generator=torch.Generator().manual_seed(8)) * 0.3
    out = Case([3, 70, 150], group=4, seqlen_q=3, seqlen_new=3, page_size=page_size,
               seed=13).check(causal=causal, window_size=window_size, alibi_slopes=slopes,
                              num_splits=3)
    # The bias changes the result.
    plain, _, _, _ = Case([3, 70, 150], group=4, seqlen_q=3, seqlen_new=3,
                          page_size=page_size, seed=13).run(causal=causal,
                                                            window_size=window_size)
    assert (out.double() - plain.double()).abs().max().item() > 1e-2


@pytest.mark.parametrize("interleaved", [True, False])
@pytest.mark.parametrize("causal", [True, False])
def test_rotary(interleaved, causal):
    """q and the new keys rotated: q at its own positions when causal, at
    cache_seqlens otherwise (FlashAttention's rule)."""
    Case([9, 65], group=2, seqlen_q=3, seqlen_new=3, rotary_dim=32, seed=3).check(
        causal=causal, interleaved=interleaved, num_splits=2)


@pytest.mark.parametrize("head_dim, dtype, num_splits", [
    (128, torch.bfloat16, 2), (96, torch.float16, 2), (96, torch.bfloat16, 1),
    (80, torch.float16, 3), (40, torch.bfloat16, 2)])
def test_head_dims_and_types(head_dim, dtype, num_splits):
    """d128's kernels; 96's own (d128's tiles reading zeros past the
    cache's columns), with and without the combine; 80 and 40 run
    zero-padded to 96 and 64."""
    Case([33, 140], group=4, head_dim=head_dim, seqlen_new=1, dtype=dtype,
         seed=head_dim).check(num_splits=num_splits, softmax_scale=0.3)


def test_paged_bf16_rotary_window_softcap():
    Case([20, 100], group=8, seqlen_q=2, seqlen_new=2, page_size=16, dtype=torch.bfloat16,
         rotary_dim=64, seed=5).check(causal=True, window_size=(40, 0), softcap=20.0,
                                      interleaved=False, num_splits=3)


def test_without_new_tokens_and_empty_caches():
    """No k/v: the cache as it is; a sequence of length 0 sees no key (out
    0, lse -inf)."""
    case = Case([0, 17, 64], group=4, seed=2)
    case.check(num_splits=2)
    case.check(causal=True)


def test_default_cache_seqlens_is_the_whole_cache():
    case = Case([50, 50], group=2, capacity=50, seed=9)
    k_cache = case.k_cache.clone()
    out = flash_attn_with_kvcache(case.q, k_cache, case.v_cache)
    want, _ = reference.attention(case.q, k_cache, case.v_cache, [50, 50])
    assert (out.double() - want).abs().max().item() <= OUT_TOLERANCE[torch.float16]


def test_int_cache_seqlens_and_the_heuristic():
    """cache_seqlens as an int, the split count left to the heuristic."""
    case = Case([40, 40], group=4, seed=4)
    out = flash_attn_with_kvcache(case.q, case.k_cache, case.v_cache, cache_seqlens=40)
    want, _ = reference.attention(case.q, case.k_cache, case.v_cache, [40, 40])
    assert (out.double() - want).abs().max().item() <= OUT_TOLERANCE[torch.float16]


def _check_against_reference(case, out, k_cache, v_cache, block_table=None, **options):
    seqlen_new = case.k.shape[1]
    want_k, want_v = reference.expected_cache(
        case.k_cache, case.v_cache, case.k, case.v, case.seqlens, case.block_table,
        case.batch_idx, None, True)
    assert torch.equal(k_cache, want_k) and torch.equal(v_cache, want_v)
    want, _ = reference.attention(case.q, want_k, want_v, case.seqlens + seqlen_new,
                                  case.block_table, case.batch_idx, **options)
    assert (out.double() - want).abs().max().item() <= OUT_TOLERANCE[case.dtype]


def test_views_are_read_and_appended_in_place():
    """K and V halves of one packed tensor with a padded head dim (strides
    that are no multiple of 16: read through a copy, appended in place), a
    strided cache_batch_idx and a transposed q."""
    case = Case([10, 70, 33], group=4, seqlen_q=2, seqlen_new=2, batch_rows=[3, 0, 1],
                seed=12)
    rows, capacity, heads_k, head_dim = case.k_cache.shape
    packed = torch.zeros(rows, capacity, 2, heads_k, head_dim + 8, dtype=case.dtype)
    k_view, v_view = packed[..., :head_dim].unbind(2)
    k_view.copy_(case.k_cache)
    v_view.copy_(case.v_cache)
    batch_idx = torch.tensor([3, 9, 0, 9, 1, 9], dtype=torch.int32)[::2]
    q = case.q.transpose(1, 2).contiguous().transpose(1, 2)
    out = flash_attn_with_kvcache(q, k_view, v_view, case.k, case.v,
                                  cache_seqlens=case.seqlens, cache_batch_idx=batch_idx,
                                  causal=True, num_splits=2)
    _check_against_reference(case, out, k_view, v_view, causal=True)


@pytest.mark.parametrize("page_size", [None, 16])
def test_long_chunk_with_a_ragged_head_dim(page_size):
    """40 new tokens (three of kv_append's 16-token programs, the last
    partial) across pages, at head dim 40 (a masked kernel's columns), k
    and v given with their features strided (copied before the kernel)
    and the cache's checked whole: nothing written outside the chunk."""
    case = Case([0, 37, 90], heads_k=3, group=1, head_dim=40, seqlen_q=40, seqlen_new=40,
                page_size=page_size, seed=21)
    case.k = case.k.transpose(-1, -2).contiguous().transpose(-1, -2)
    assert case.k.stride(-1) != 1
    case.check(causal=True)


def test_block_table_with_strided_rows():
    case = Case([40, 7], group=2, seqlen_new=1, page_size=16, seed=13)
    table = case.block_table.t().contiguous().t()
    assert table.stride(1) != 1
    k_cache, v_cache = case.k_cache.clone(), case.v_cache.clone()
    out = flash_attn_with_kvcache(case.q, k_cache, v_cache, case.k, case.v,
                                  cache_seqlens=case.seqlens, block_table=table, num_splits=2)
    _check_against_reference(case, out, k_cache, v_cache)


# --------------------------------------------------------------------------
# The split heuristic and the variants
# --------------------------------------------------------------------------

@pytest.mark.parametrize("programs, max_keys, want", [
    (132, 100_000, 1),        # the batch fills the SMs
    (500, 100_000, 1),
    (64, 16 * 1024, 8),       # B=8, 8 K/V heads: 512 programs, 4 an SM of 132
    (8, 2048, 16),            # B=1: at least 2 blocks of 64 a split
    (8, 100, 1),
    (8, 4096, 32),
    (8, 128 * 1024, 64),      # capped at MAX_SPLITS
])
def test_split_heuristic(programs, max_keys, want):
    assert kvcache.choose_num_splits(programs, max_keys, 132, 64) == want


@pytest.mark.parametrize("num_splits", [1, 7])
def test_combine_takes_splits_a_block_at_a_time(num_splits):
    """attn_decode_combine with blocks of 4 splits (the manifest's read all
    at once): 7 splits take two blocks, the second ragged, and rows whose
    splits saw no key (LSE -inf) weigh nothing; a row that saw no key at
    all gets 0 and LSE -inf. Against float64."""
    from tile.kernels.decode import attn_decode_combine
    generator = torch.Generator().manual_seed(num_splits)
    z, h_kv, group, n_q, d = 2, 3, 2, 3, 64
    rows = group * n_q
    lse_acc = torch.randn(num_splits, z * h_kv, rows, generator=generator) * 4
    o_acc = torch.randn(num_splits, z * h_kv, rows, d, generator=generator)
    lse_acc[0, 1, 2] = -math.inf                      # one split saw no key
    lse_acc[:, 4, 5] = -math.inf                      # no split saw a key
    out = torch.empty(z, n_q, h_kv * group, d, dtype=torch.float16)
    lse = torch.empty(z, h_kv * group, n_q)
    attn_decode_combine[(rows, z * h_kv)](
        out, o_acc, lse_acc, lse, *out.stride()[:3], z, h_kv, group, n_q, rows, num_splits,
        HEAD_DIM=d, BLOCK_S=4)
    weights = torch.softmax(lse_acc.double(), dim=0).nan_to_num(0.0)
    want = (weights[..., None] * o_acc.double()).sum(0)
    want_lse = torch.logsumexp(lse_acc.double(), dim=0)
    # Part (zkv, row) is token row // group of query head zkv % h_kv * group + row % group.
    want = want.view(z, h_kv, n_q, group, d).permute(0, 2, 1, 3, 4).reshape(out.shape)
    want_lse = want_lse.view(z, h_kv, n_q, group).permute(0, 1, 3, 2).reshape(lse.shape)
    assert (out.double() - want).abs().max().item() < 2e-3
    finite = want_lse.isfinite()
    assert torch.equal(finite, lse.isfinite()) and not finite.all()
    assert (lse.double()[finite] - want_lse[finite]).abs().max().item() < 1e-5
    # Part (4, 5): sequence 1, K/V head 1, token 2, query head 1 * group + 1.
    assert lse[1, group + 1, 2] == -math.inf and not out[1, 2, group + 1].any()


def test_block_m_packs_the_group():
    assert [kvcache.choose_block_m(rows, [16, 64]) for rows in (1, 8, 16, 17, 64, 72)] == \
        [16, 16, 16, 64, 64, 64]


def test_manifest_ships_the_decoding_variants():
    names = {v.name for v in manifest.VARIANTS}
    for t in ("fp16", "bf16"):
        for d in (64, 96, 128):
            assert f"attn_decode_combine_{t}_d{d}" in names
            for m in (16, 64):
                assert {f"attn_decode_{t}_d{d}_m{m}", f"attn_decode_{t}_d{d}_m{m}_softcap"} \
                    <= names


# --------------------------------------------------------------------------
# Errors name the problem
# --------------------------------------------------------------------------

def _inputs(**change):
    """Valid arguments (a contiguous cache of 32 tokens, 2 K/V heads, 4
    query heads, d64, fp16, one new token), with `change` applied."""
    generator = torch.Generator().manual_seed(0)
    args = {"q": randn(generator, 2, 1, 4, 64), "k_cache": randn(generator, 2, 32, 2, 64),
            "v_cache": randn(generator, 2, 32, 2, 64), "k": randn(generator, 2, 1, 2, 64),
            "v": randn(generator, 2, 1, 2, 64),
            "cache_seqlens": torch.tensor([3, 9], dtype=torch.int32)}
    args.update(change)
    return args


def _paged(**change):
    generator = torch.Generator().manual_seed(1)
    pool = randn(generator, 6, 16, 2, 64)
    paged = {"k_cache": pool, "v_cache": pool.clone(),
             "block_table": torch.tensor([[0, 1], [2, 3]], dtype=torch.int32)}
    return _inputs(**{**paged, **change})


@pytest.mark.parametrize("args, error, message", [
    (_inputs(q="q"), TypeError, "q must be a torch.Tensor, not str"),
    (_inputs(q=torch.zeros(2, 4, 64).half()), ValueError,
     r"q must have 4 dimensions \(batch, seqlen_q, heads, head_dim\)"),
    (_inputs(q=torch.zeros(2, 1, 4, 64)), TypeError,
     "q is torch.float32: Tile's decoding kernels take torch.float16 or torch.bfloat16"),
    (_inputs(v_cache=torch.zeros(2, 32, 2, 64, dtype=torch.bfloat16)), TypeError,
     "q is torch.float16 but v_cache is torch.bfloat16"),
    (_inputs(v_cache=torch.zeros(2, 31, 2, 64).half()), ValueError,
     "k_cache and v_cache must have one shape"),
    (_inputs(k_cache=torch.zeros(2, 32, 3, 64).half(), v_cache=torch.zeros(2, 32, 3, 64)
             .half()), ValueError, "k_cache has 3 heads, which does not divide the 4 heads"),
    (_inputs(q=torch.zeros(2, 1, 4, 32).half()), ValueError,
     "q and k_cache must have one positive head_dim"),
    (_inputs(q=torch.zeros(2, 1, 4, 256).half(), k_cache=torch.zeros(2, 32, 2, 256).half(),
             v_cache=torch.zeros(2, 32, 2, 256).half(), k=None, v=None), ValueError,
     r"head_dim 256: the decoding kernels take head dims \[64, 96, 128\]"),
    (_inputs(v=None), ValueError, "k and v come together"),
    (_inputs(k=torch.zeros(2, 1, 1, 64).half(), v=torch.zeros(2, 1, 1, 64).half()), ValueError,
     r"k must have the shape \(batch, seqlen_new, heads_k, head_dim\) = \(2, 1, 2, 64\)"),
    (_inputs(cache_seqlens=torch.tensor([3, 9])), TypeError,
     "cache_seqlens must be torch.int32, not torch.int64"),
    (_inputs(cache_seqlens=torch.tensor([3], dtype=torch.int32)), ValueError,
     r"cache_seqlens must have the shape \(batch,\) = \(2,\)"),
    (_inputs(cache_seqlens=torch.tensor([3, 32], dtype=torch.int32)), ValueError,
     r"cache_seqlens holds 32, outside \[0, 32\) \(the cache holds 32 tokens a sequence "
     r"and 1 are appended\)"),
    (_inputs(cache_seqlens=40, k=None, v=None), ValueError,
     r"cache_seqlens = 40 is outside \[0, 32\] \(the cache holds 32 tokens a sequence "
     r"and 0 are appended\)"),
    (_inputs(cache_seqlens=None), ValueError,
     r"cache_seqlens = 32 is outside \[0, 31\] .*and 1 are appended"),
    (_inputs(cache_batch_idx=torch.tensor([0, 2], dtype=torch.int32)), ValueError,
     r"cache_batch_idx holds 2, outside \[0, 2\) \(the rows of k_cache\)"),
    (_inputs(k_cache=torch.zeros(1, 32, 2, 64).half(), v_cache=torch.zeros(1, 32, 2, 64)
             .half()), ValueError, "k_cache has 1 sequences, fewer than q's batch 2"),
    (_paged(k_cache=torch.zeros(6, 24, 2, 64).half(), v_cache=torch.zeros(6, 24, 2, 64)
            .half()), ValueError, "page_size 24 .* must be a positive multiple of 16"),
    (_paged(block_table=torch.tensor([[0, 1], [2, 3]])), TypeError,
     "block_table must be torch.int32, not torch.int64"),
    (_paged(block_table=torch.tensor([[0, 1]], dtype=torch.int32)), ValueError,
     r"block_table must have the shape \(batch, max_blocks\)"),
    (_paged(block_table=torch.tensor([[0, 1], [2, 6]], dtype=torch.int32)), ValueError,
     r"block_table holds 6, outside \[0, 6\) \(the pages of k_cache\)"),
    (_paged(cache_batch_idx=torch.tensor([0, 1], dtype=torch.int32)), ValueError,
     "cache_batch_idx and block_table do not go together"),
    (_inputs(block_table=torch.zeros(2, 3)), TypeError,
     "block_table must be torch.int32, not torch.float32"),
    (_inputs(alibi_slopes=torch.ones(3)), ValueError,
     r"alibi_slopes must have the shape \(4,\) \(heads\) or \(2, 4\)"),
    (_inputs(alibi_slopes=torch.ones(4), softcap=5.0), NotImplementedError,
     "ALiBi or capped scores, not both"),
    (_inputs(rotary_cos=torch.ones(40, 16)), ValueError,
     "rotary_cos and rotary_sin come together"),
    (_inputs(rotary_cos=torch.ones(40, 16), rotary_sin=torch.ones(40, 16), k=None, v=None),
     ValueError, "they need k and v"),
    (_inputs(rotary_cos=torch.ones(40, 40), rotary_sin=torch.ones(40, 40)), ValueError,
     "rotary_dim = 80 must be positive and at most head_dim 64"),
    (_inputs(rotary_cos=torch.ones(5, 16), rotary_sin=torch.ones(5, 16)), ValueError,
     r"the positions of k holds 9, outside \[0, 5\) \(the rows of rotary_cos\)"),
    (_inputs(num_splits=-1), TypeError, "num_splits must be a non-negative int"),
    (_inputs(causal=1), TypeError, "causal must be True or False"),
    (_inputs(softcap=-1.0), ValueError, "softcap must be 0"),
    (_inputs(window_size=5), TypeError, "window_size must be a pair of ints"),
    (_inputs(softmax_scale=0.0), ValueError, "softmax_scale must be positive and finite"),
])
def test_bad_input_is_refused_by_name(args, error, message):
    with pytest.raises(error, match=message):
        flash_attn_with_kvcache(**args)


def test_a_refused_call_leaves_the_cache_untouched():
    args = _inputs(alibi_slopes=torch.ones(4), softcap=5.0)
    before = args["k_cache"].clone()
    with pytest.raises(NotImplementedError):
        flash_attn_with_kvcache(**args)
    assert torch.equal(args["k_cache"], before)


def test_empty_query_launches_nothing():
    args = _inputs(q=torch.zeros(2, 0, 4, 64).half(), k=None, v=None)
    out = flash_attn_with_kvcache(**args)
    assert out.shape == (2, 0, 4, 64)


def test_lse_layout_is_batch_heads_tokens():
    case = Case([10, 70], heads_k=2, group=2, seqlen_q=3, seqlen_new=3, seed=8)
    _, lse, _, _ = case.run(causal=True)
    assert lse.shape == (2, 4, 3) and lse.dtype == torch.float32
    assert math.isfinite(lse.min().item())


# --------------------------------------------------------------------------
# The GPU path's arguments, checked by the runtime without a GPU
# --------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {"seqlens": [5, 300], "seqlen_new": 1, "group": 8},
    {"seqlens": [20, 90], "seqlen_new": 9, "seqlen_q": 9, "group": 8, "page_size": 16},
    {"seqlens": [3, 40], "seqlen_new": 2, "seqlen_q": 2, "head_dim": 128,
     "dtype": torch.bfloat16},
])
def test_gpu_launches_bind_every_argument(options, monkeypatch):
    """The launches a call makes, given to the runtime as the GPU path gives
    them: the built variants take every argument by name, with its
    promises (16-byte alignment, strides multiples of 16), and compute
    from their launch specs the grids the interpreter ran."""
    from tile import runtime
    from tile.attention import functional
    try:
        functional.kernel_bundle()
        runtime.library()
    except (RuntimeError, OSError) as error:
        pytest.skip(f"no built kernels or runtime library: {error}")
    if not any(k.family == kvcache.DECODE for k in functional.kernel_bundle().bundle.kernels):
        pytest.skip("the build folder's kernels predate the decoding kernels")
    captured = []
    monkeypatch.setattr(kvcache, "_run_on_interpreter", captured.extend)
    Case(**options).run(causal=True, num_splits=1)
    assert [family for family, *_ in captured] == [kvcache.APPEND, kvcache.DECODE]
    Case(**options).run(causal=True, num_splits=3)
    assert [family for family, *_ in captured] == [kvcache.APPEND, kvcache.DECODE] * 2 + [
        kvcache.COMBINE]
    launches = kvcache.gpu_launches(captured, torch.device("cpu"))
    for (kernel, values), (_, _, _, _, grid) in zip(launches, captured):
        assert kernel.check(values) == tuple(grid) + (1,) * (3 - len(grid))


# --------------------------------------------------------------------------
# Launch plans: later calls of a shape replay the first call's launches
# --------------------------------------------------------------------------

class InterpretedRuntime(RuntimeStandIn):
    """Stands in for the runtime on the GPU path: the runtime checks the
    arguments and computes each grid from the built variant's launch spec,
    then the variant's kernel runs on the interpreter over the tensors the
    pointers were made from."""

    def __init__(self):
        super().__init__(kvcache.CPU_SM_COUNT)
        self.launches = 0

    def launch(self, kernel, values):
        from tile import runtime
        from tile.kernels import decode
        self.launches += 1
        grid = kernel.check(values, self.num_sms)
        named = {name: self.tensors[value.address] if isinstance(value, runtime.DevicePointer)
                 else value for name, value in values.items()}
        getattr(decode, kernel.family)[grid](**named, **kernel.constexprs,
                                             num_warps=kernel.num_warps)


@pytest.fixture
def planned(monkeypatch):
    """flash_attn_with_kvcache's GPU path on CPU tensors, its launches on
    the interpreter, and launch plans of its own."""
    from tile import runtime
    from tile.attention import functional
    from tile.attention.plan import PlanCache
    try:
        bundle = functional.kernel_bundle().bundle
        runtime.library()
    except (RuntimeError, OSError) as error:
        pytest.skip(f"no built kernels or runtime library: {error}")
    if not any(k.family == kvcache.DECODE for k in bundle.kernels):
        pytest.skip("the build folder's kernels predate the decoding kernels")
    emulated = InterpretedRuntime()
    plans = PlanCache()
    monkeypatch.setattr(kvcache, "_on_gpu", lambda device: True)
    monkeypatch.setattr(functional, "_device_pointer", emulated.pointer)
    monkeypatch.setattr(functional, "_launch_all", emulated.launch_all)
    monkeypatch.setattr(functional, "_stream", lambda device: 0)
    monkeypatch.setattr(functional, "_launch_plans", lambda: plans)
    monkeypatch.setattr(runtime, "multiprocessor_count", lambda device: kvcache.CPU_SM_COUNT)
    monkeypatch.setattr(runtime.Kernel, "fixed_launch",
                        lambda kernel, sources: emulated.fixed_launch(kernel, sources))
    emulated.plans = plans
    return emulated


@pytest.mark.parametrize("options, num_splits", [
    ({"seqlens": [5, 300], "seqlen_new": 1, "group": 8}, 1),
    ({"seqlens": [5, 300], "seqlen_new": 1, "group": 8}, 3),
    ({"seqlens": [20, 90], "seqlen_new": 9, "seqlen_q": 9, "page_size": 16}, 0),
    ({"seqlens": [7, 200], "seqlen_new": 2, "seqlen_q": 2, "rotary_dim": 32}, 2),
    ({"seqlens": [40, 9], "seqlen_new": 1, "batch_rows": [2, 0]}, 0),
])
def test_repeated_calls_replay_the_first_calls_launches(planned, options, num_splits):
    """The second and later calls of a shape launch through the plan the
    first made, on fresh inputs each time (appended to in place as the
    whole path does), each against the float64 reference."""
    per_call = None
    for seed in range(3):
        Case(**options, seed=seed).check(causal=True, num_splits=num_splits)
        per_call = per_call or planned.launches
    assert planned.whole_paths == 1 and len(planned.plans) == 1
    assert planned.launches == 3 * per_call
    if num_splits:   # the append, the decoding kernel; one split: no combine
        assert per_call == 1 + (1 if num_splits == 1 else 2)


def test_plans_are_kept_apart_by_what_decides_the_launches(planned):
    """Another mask, split count, length of the new chunk, softcap or ALiBi
    takes the whole path once, with a plan of its own; a ragged head dim
    (padded) takes it every time."""
    calls = [({}, {}), ({}, {"causal": True}), ({}, {"num_splits": 2}),
             ({"seqlen_new": 2, "seqlen_q": 2}, {}), ({}, {"window_size": (40, 0)}),
             ({}, {"softcap": 5.0}), ({}, {"alibi_slopes": torch.full((2, 8), 0.1)})]
    for options, kwargs in calls:
        for seed in range(2):
            Case([30, 150], **{"seqlen_new": 1, **options}, seed=seed).check(**kwargs)
    assert planned.whole_paths == len(calls) == len(planned.plans)
    for seed in range(2):
        Case([30, 150], head_dim=40, seed=seed).check()
    assert planned.whole_paths == len(calls) + 2 and len(planned.plans) == len(calls)


def test_append_past_the_cache_stops_with_an_assertion():
    """kv_append itself (the API refuses such lengths on the host when it can
    read them; CUDA lengths it cannot without waiting): a key at or past
    the cache's tokens fails the kernel's assertion, which names it."""
    from tile.kernels import decode
    cache = torch.zeros(2, 8, 1, 64, dtype=torch.float16)
    new = torch.ones(2, 3, 1, 64, dtype=torch.float16)
    rows = torch.tensor([0, 1], dtype=torch.int32)
    lengths = torch.tensor([6, 0], dtype=torch.int32)
    kv_lens = torch.empty(2, dtype=torch.int32)
    strides = {f"stride_{t}{d}": s for t, tensor in (("k", cache), ("v", cache))
               for d, s in zip("pnhd", tensor.stride())}
    strides.update({f"stride_{t}n{d}": s for t in "kv" for d, s in zip("znh", new.stride()[:3])})
    with pytest.raises(Exception, match="exceeds the cache's tokens"):
        decode.kv_append[(1, 2)](
            cache, cache, new, new, rows, lengths, kv_lens, **strides, stride_bt=1, Z=2,
            H_KV=1, N_NEW=3, PAGE_SIZE=8, HEAD_DIM=64, MAX_KEYS=8, BLOCK_T=16, BLOCK_D=64)
