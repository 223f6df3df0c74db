"""A float64 reference for flash_attn_with_kvcache, written apart from the
API's code: the cache after the append, and attention of each sequence's
queries to its keys, with FlashAttention's bottom-right masks, softcap and
rotary embedding.  Shared by test_kvcache.py (the interpreter) and
test_attention_kvcache_gpu.py (the GPU)."""

import math

import torch


def rotate(x, cos, sin, positions, interleaved):
    """x (seqlen, heads, head_dim) rotated at `positions` (seqlen,) in
    float64, as complex products: feature pairs (2i, 2i + 1) when
    interleaved, else (i, i + rotary_dim / 2), times cos + i sin."""
    half = cos.shape[1]
    x = x.double().clone()
    turn = torch.complex(cos[positions].double(), sin[positions].double())[:, None, :]
    if interleaved:
        pairs = torch.view_as_complex(x[..., :2 * half].reshape(*x.shape[:2], half, 2)
                                      .contiguous())
        x[..., :2 * half] = torch.view_as_real(pairs * turn).flatten(-2)
    else:
        pairs = torch.complex(x[..., :half], x[..., half:2 * half]) * turn
        x[..., :half], x[..., half:2 * half] = pairs.real, pairs.imag
    return x


def cache_slots(b, positions, block_table, batch_idx, page_size):
    """(cache dim-0 index, dim-1 index) lists of sequence b's `positions`."""
    if block_table is None:
        row = b if batch_idx is None else int(batch_idx[b])
        return [row] * len(positions), list(positions)
    return ([int(block_table[b, p // page_size]) for p in positions],
            [p % page_size for p in positions])


def expected_cache(k_cache, v_cache, k, v, seqlens, block_table, batch_idx, rotary,
                   interleaved):
    """The caches after the append: k (rotated, rounded to the cache's
    dtype) and v at seqlens[b] + i of each sequence b."""
    k_cache, v_cache = k_cache.clone(), v_cache.clone()
    if k is None:
        return k_cache, v_cache
    page_size = k_cache.shape[1]
    for b in range(k.shape[0]):
        positions = [int(seqlens[b]) + i for i in range(k.shape[1])]
        new_k = k[b]
        if rotary is not None:
            new_k = rotate(new_k, *rotary, torch.tensor(positions), interleaved)
        pages, rows = cache_slots(b, positions, block_table, batch_idx, page_size)
        for i, (page, row) in enumerate(zip(pages, rows)):
            k_cache[page, row] = new_k[i].to(k_cache.dtype)
            v_cache[page, row] = v[b, i]
    return k_cache, v_cache


def attention(q, k_cache, v_cache, kv_lens, block_table=None, batch_idx=None, scale=None,
              causal=False, window=(-1, -1), softcap=0.0, rotary=None, seqlens=None,
              interleaved=True, alibi_slopes=None):
    """(out, lse) in float64: out (batch, seqlen_q, heads, head_dim), lse
    (batch, heads, seqlen_q); rows that see no key get 0 and -inf.  q is
    rotated here (at seqlens + i when causal or windowed, else seqlens) and
    rounded to its dtype, as the API rounds it.  alibi_slopes ((heads,) or
    (batch, heads)): -slope * |diagonal - j| added to the scores."""
    batch, seqlen_q, heads, head_dim = q.shape
    heads_k = k_cache.shape[2]
    scale = scale or 1 / math.sqrt(head_dim)
    page_size = k_cache.shape[1]
    out = torch.zeros(batch, seqlen_q, heads, head_dim, dtype=torch.float64)
    lse = torch.full((batch, heads, seqlen_q), -math.inf, dtype=torch.float64)
    left, right = window
    if causal:
        right = 0
    for b in range(batch):
        n = int(kv_lens[b])
        qb = q[b]
        if rotary is not None:
            start = int(seqlens[b])
            local = causal or max(window) >= 0
            positions = torch.arange(seqlen_q) + start if local else \
                torch.full((seqlen_q,), start)
            qb = rotate(qb, *rotary, positions, interleaved).to(q.dtype)
        pages, rows = cache_slots(b, list(range(n)), block_table, batch_idx, page_size)
        keys = k_cache[pages, rows].double().repeat_interleave(heads // heads_k, 1)
        values = v_cache[pages, rows].double().repeat_interleave(heads // heads_k, 1)
        scores = torch.einsum("thd,jhd->htj", qb.double(), keys) * scale
        if softcap > 0:
            scores = softcap * torch.tanh(scores / softcap)
        diagonal = torch.arange(seqlen_q)[:, None] + n - seqlen_q
        j = torch.arange(n)[None, :]
        if alibi_slopes is not None:
            slopes = alibi_slopes.double().expand(batch, heads)[b]
            scores = scores - slopes[:, None, None] * (diagonal - j).abs()
        visible = torch.ones(seqlen_q, n, dtype=torch.bool)
        if right >= 0:
            visible &= j <= diagonal + right
        if left >= 0:
            visible &= j >= diagonal - left
        scores = scores.masked_fill(~visible, -math.inf)
        row_lse = torch.logsumexp(scores, -1)
        weights = torch.exp(scores - row_lse[..., None]).nan_to_num(0.0)
        out[b] = torch.einsum("htj,jhd->thd", weights, values)
        lse[b] = row_lse
    return out, lse
