"""Decoding attention: a few new query tokens against a KV cache, split
along the keys (flash-decoding), and the combine that merges the splits.

Layouts (strides in elements, the last dimension contiguous):

- Q: [Z, N_Q, H, HEAD_DIM] through (stride_qz, stride_qn, stride_qh), the
  N_Q new query tokens of each of Z sequences, H = H_KV * GROUP query heads;
  query head h reads K/V head h // GROUP (grouped-query attention).
- K, V: a pool of pages [num_pages, PAGE_SIZE, H_KV, HEAD_DIM] through
  (stride_kp, stride_kn, stride_kh) and (stride_vp, stride_vn, stride_vh).
  Key j of sequence z lies in page BLOCK_TABLE[z * stride_bt + j //
  PAGE_SIZE], row j % PAGE_SIZE.  A cache that is not paged is one page a
  sequence: BLOCK_TABLE holds each sequence's row of the cache (one entry,
  stride_bt 1) and PAGE_SIZE is the cache's length, so j // PAGE_SIZE is 0.
  The page is gathered for each key row, so BLOCK_N need not divide
  PAGE_SIZE.
- KV_LENS: int32 [Z], the keys of each sequence (cache and new tokens).

One program of attn_decode owns BLOCK_M rows of the GROUP * N_Q query rows
of one K/V head (row r is token r // GROUP of query head h_kv * GROUP + r %
GROUP): the heads of a group share every K/V tile it loads, which is read
once for all of them.  Rows past GROUP * N_Q are zero and never stored
(BLOCK_M is at least 16, the smallest tl.dot).  Grid (NUM_SPLITS,
cdiv(ROWS, BLOCK_M), Z * H_KV): split s takes the s-th of NUM_SPLITS
ranges of whole BLOCK_N-key blocks of the keys the program's rows may see,
and writes its rows' partial output (normalised over its keys, fp32) to
O_ACC and their log-sum-exp (natural log, -inf for a row that saw none of
its keys) to LSE_ACC:

    O_ACC   fp32 [NUM_SPLITS, Z * H_KV, ROWS, HEAD_DIM], contiguous
    LSE_ACC fp32 [NUM_SPLITS, Z * H_KV, ROWS], contiguous

kv_append writes N_NEW new tokens' keys and values into the cache in place
before attention reads it (flash_attn_with_kvcache's k and v): K_NEW and
V_NEW [Z, N_NEW, H_KV, HEAD_DIM] through (stride_knz, stride_knn,
stride_knh) and (stride_vnz, ...), the last dimension contiguous; token t
of sequence z goes to key CACHE_SEQLENS[z] + t, through the block table as
a key read above, into K and V of any strides (stride_kd and stride_vd:
the caller's cache, written where it is).  KV_LENS[z] gets
CACHE_SEQLENS[z] + N_NEW, the keys attention then covers; a key at or past
MAX_KEYS fails an assertion.  HEAD_DIM (at most BLOCK_D) is a run-time
value: a cache's head dim need not be a power of two.  Grid (cdiv(N_NEW,
BLOCK_T), Z * H_KV).

attn_decode_combine merges the splits of each row by their LSE into O, q's
type, [Z, N_Q, H, HEAD_DIM] through (stride_oz, stride_on, stride_oh), and
LSE, fp32 [Z, H, N_Q] contiguous (FlashAttention's softmax_lse), one row
a program: grid (ROWS, Z * H_KV).  With one split attn_decode writes O and
LSE itself (O_ACC and LSE_ACC are not touched) and no combine runs.

Masks are FlashAttention's, aligned bottom-right: token t's diagonal is key
t + KV_LEN - N_Q, and it sees key j < KV_LEN iff j <= diagonal + upper and
j >= diagonal + lower.  Causal is upper = 0, a window (left, right) lower =
-left and upper = right; no bound is +-2^30 (the host clamps to that, so
the sums stay within i32).  The masks are run-time values: a decoding step
is bound by the bytes of K and V it reads, not by the compares.  SOFTCAP
caps the scores as the training kernels do (softcap * tanh(score /
softcap)); ALIBI adds -slope * |diagonal - j| to them, the slope of the
row's query head from ALIBI_SLOPES, fp32 [Z, H] contiguous (not read
without ALIBI).
"""

import tile
import tile.language as tl
from tile.kernels.attention import _alibi_distance

LOG2E = tl.constexpr(1.4426950408889634)   # log2(e)
LN2 = tl.constexpr(0.6931471805599453)     # ln(2)


@tile.jit
def _group_rows(row_block, off_zkv, H_KV, GROUP, ROWS, BLOCK_M: tl.constexpr):
    """(sequence, rows, row_ok, token, query head) of row block row_block of
    program head off_zkv = sequence * H_KV + K/V head: row r is token r //
    GROUP of query head kv * GROUP + r % GROUP."""
    rows = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
    token, head = _token_head(rows, off_zkv, H_KV, GROUP)
    return off_zkv // H_KV, rows, rows < ROWS, token, head


@tile.jit
def _token_head(rows, off_zkv, H_KV, GROUP):
    """(token, query head) of query rows `rows` of program head off_zkv."""
    return rows // GROUP, off_zkv % H_KV * GROUP + rows % GROUP


@tile.jit
def _out_rows(off_z, token, head, stride_oz, stride_on, stride_oh):
    """Element offsets (64 bits) of the rows of O, [Z, N_Q, H, HEAD_DIM]."""
    return off_z.to(tl.int64) * stride_oz + token.to(tl.int64) * stride_on \
        + head.to(tl.int64) * stride_oh


@tile.jit
def _lse_rows(off_z, token, head, H_KV, GROUP, N_Q):
    """Element offsets (64 bits) in LSE, [Z, H, N_Q] contiguous."""
    return (off_z * H_KV * GROUP + head).to(tl.int64) * N_Q + token


@tile.jit
def _key_rows(TABLE, table_row, offs_n, key_ok, PAGE_SIZE, stride_p, stride_n):
    """Element offsets (64 bits) of key rows offs_n from the base of their
    K/V head: each row's page gathered from the block table."""
    page = tl.load(TABLE + table_row + offs_n // PAGE_SIZE, mask=key_ok, other=0)
    return page.to(tl.int64) * stride_p + (offs_n % PAGE_SIZE).to(tl.int64) * stride_n


@tile.jit
def _in_head(row_ok, offs_d, HEAD_DIM: tl.constexpr, WIDTH: tl.constexpr):
    """A block's mask: its rows', and with WIDTH > HEAD_DIM its columns'
    within the head dim."""
    if WIDTH > HEAD_DIM:
        return row_ok[:, None] & (offs_d < HEAD_DIM)[None, :]
    return row_ok[:, None]


@tile.jit
def _split_range(kv_len, n_q, upper, lower, split, NUM_SPLITS, BLOCK_N: tl.constexpr):
    """[start, end) of split `split`: the keys any of the n_q tokens may see
    (the first token's lower bound to the last token's upper bound), cut
    into NUM_SPLITS ranges of whole BLOCK_N blocks."""
    lo = tl.maximum(kv_len - n_q + lower, 0)
    hi = tl.minimum(kv_len + upper, kv_len)
    blocks = (tl.maximum(hi - lo, 0) + BLOCK_N - 1) // BLOCK_N
    per_split = (blocks + NUM_SPLITS - 1) // NUM_SPLITS * BLOCK_N
    start = lo + split * per_split
    return start, tl.minimum(start + per_split, hi)


@tile.jit(launch=tile.Launch(grid=("NUM_SPLITS", "cdiv(ROWS, BLOCK_M)", "Z * H_KV"),
                             keys=("HEAD_DIM", "BLOCK_M", "SOFTCAP", "ALIBI")),
          do_not_specialize=("stride_qz", "stride_qn", "stride_qh", "stride_kp", "stride_kn",
                             "stride_kh", "stride_vp", "stride_vn", "stride_vh", "stride_bt",
                             "Z", "H_KV", "GROUP", "N_Q", "ROWS", "PAGE_SIZE", "NUM_SPLITS",
                             "upper", "lower", "stride_oz", "stride_on", "stride_oh"))
def attn_decode(Q, K, V, BLOCK_TABLE, KV_LENS, O_ACC, LSE_ACC, sm_scale, softcap,
                stride_qz, stride_qn, stride_qh, stride_kp, stride_kn, stride_kh,
                stride_vp, stride_vn, stride_vh, stride_bt, Z, H_KV, GROUP, N_Q, ROWS,
                PAGE_SIZE, NUM_SPLITS, upper, lower, ALIBI_SLOPES, O, LSE, stride_oz,
                stride_on, stride_oh, HEAD_DIM: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SOFTCAP: tl.constexpr = False,
                ALIBI: tl.constexpr = False, BLOCK_D: tl.constexpr = 0):
    tl.static_assert(BLOCK_M >= 16 and BLOCK_N >= 16, "tl.dot needs 16 rows and keys")
    tl.static_assert(BLOCK_D == 0 or BLOCK_D >= HEAD_DIM, "BLOCK_D must hold HEAD_DIM")
    # The blocks' width (O_ACC's rows): zeros read past the head dim, none
    # stored there.
    WIDTH: tl.constexpr = BLOCK_D if BLOCK_D else HEAD_DIM
    tl.static_assert(not (ALIBI and SOFTCAP), "ALiBi with capped scores is not supported")
    split = tl.program_id(0)
    off_zkv = tl.program_id(2)
    off_z, rows, row_ok, token, head = _group_rows(tl.program_id(1), off_zkv, H_KV, GROUP, ROWS,
                                                   BLOCK_M)
    off_kv = off_zkv % H_KV
    offs_d = tl.arange(0, WIDTH)
    q_rows = off_z.to(tl.int64) * stride_qz + token.to(tl.int64) * stride_qn \
        + head.to(tl.int64) * stride_qh
    q = tl.load(Q + q_rows[:, None] + offs_d[None, :],
                mask=_in_head(row_ok, offs_d, HEAD_DIM, WIDTH), other=0.0)

    kv_len = tl.load(KV_LENS + off_z)
    start, end = _split_range(kv_len, N_Q, upper, lower, split, NUM_SPLITS, BLOCK_N)
    # Each token's diagonal, and the keys its row sees: [first, last].
    diagonal = token + kv_len - N_Q
    first = diagonal + lower
    last = tl.minimum(diagonal + upper, kv_len - 1)
    if SOFTCAP:
        qk_scale = softcap * LOG2E
        cap_scale = sm_scale / softcap
    else:
        qk_scale = sm_scale * LOG2E
        cap_scale = 1.0
    if ALIBI:
        # Each row's slope (its query head's), in base 2.
        slope = tl.load(ALIBI_SLOPES + off_z * H_KV * GROUP + head, mask=row_ok,
                        other=0.0) * LOG2E
    table_row = off_z.to(tl.int64) * stride_bt
    k_head = K + off_kv.to(tl.int64) * stride_kh
    v_head = V + off_kv.to(tl.int64) * stride_vh

    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, WIDTH], tl.float32)
    for start_n in range(start, end, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        key_ok = offs_n < end
        k_rows = _key_rows(BLOCK_TABLE, table_row, offs_n, key_ok, PAGE_SIZE, stride_kp,
                           stride_kn)
        v_rows = _key_rows(BLOCK_TABLE, table_row, offs_n, key_ok, PAGE_SIZE, stride_vp,
                           stride_vn)
        k = tl.load(k_head + k_rows[:, None] + offs_d[None, :],
                    mask=_in_head(key_ok, offs_d, HEAD_DIM, WIDTH), other=0.0)
        v = tl.load(v_head + v_rows[:, None] + offs_d[None, :],
                    mask=_in_head(key_ok, offs_d, HEAD_DIM, WIDTH), other=0.0)
        qk = tl.dot(q, tl.trans(k))
        if SOFTCAP:
            qk = tl.math.tanh(qk * cap_scale)
        visible = (offs_n[None, :] >= first[:, None]) & (offs_n[None, :] <= last[:, None])
        if ALIBI:
            scores = tl.where(visible, qk * qk_scale
                              - slope[:, None] * _alibi_distance(diagonal, offs_n, 0),
                              -float("inf"))
        else:
            scores = tl.where(visible, qk * qk_scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(scores, 1))
        # A row that has seen no key yet subtracts 0, not -inf: p and alpha
        # are then 0 instead of NaN.
        m_sub = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.math.exp2(m_i - m_sub)
        p = tl.math.exp2(scores - m_sub[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new

    # Natural log; -inf for a row that saw none of the split's keys (its
    # output is 0 and its weight in the combine 0).
    lse = (m_i + tl.math.log2(l_i)) * LN2
    o = acc * (1.0 / tl.where(l_i > 0, l_i, 1.0))[:, None]
    if NUM_SPLITS == 1:
        # The rows' results are final: written where the combine would.
        o_rows = _out_rows(off_z, token, head, stride_oz, stride_on, stride_oh)
        tl.store(O + o_rows[:, None] + offs_d[None, :], o.to(O.dtype.element_ty),
                 mask=_in_head(row_ok, offs_d, HEAD_DIM, WIDTH))
        tl.store(LSE + _lse_rows(off_z, token, head, H_KV, GROUP, N_Q), lse, mask=row_ok)
    else:
        part = (split * Z * H_KV + off_zkv).to(tl.int64) * ROWS + rows
        tl.store(LSE_ACC + part, lse, mask=row_ok)
        tl.store(O_ACC + part[:, None] * WIDTH + offs_d[None, :], o, mask=row_ok[:, None])


@tile.jit(launch=tile.Launch(grid=("ROWS", "Z * H_KV"), keys=("HEAD_DIM",)),
          do_not_specialize=("stride_oz", "stride_on", "stride_oh", "Z", "H_KV", "GROUP",
                             "N_Q", "ROWS", "NUM_SPLITS"))
def attn_decode_combine(O, O_ACC, LSE_ACC, LSE, stride_oz, stride_on, stride_oh, Z, H_KV,
                        GROUP, N_Q, ROWS, NUM_SPLITS, HEAD_DIM: tl.constexpr,
                        BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr = 0):
    """out = sum_s exp(lse_s - lse) * out_s with lse = log sum_s exp(lse_s),
    relative to the running max so nothing overflows; a row whose splits
    all saw no key gets 0 and -inf.  One row a program, BLOCK_S splits at
    a time: a block's loads are all issued before any is used, so a row
    costs one memory latency a block of splits, not one a split.  BLOCK_D
    as attn_decode's (O_ACC's rows)."""
    WIDTH: tl.constexpr = BLOCK_D if BLOCK_D else HEAD_DIM
    row = tl.program_id(0)
    off_zkv = tl.program_id(1)
    off_z = off_zkv // H_KV
    token, head = _token_head(row, off_zkv, H_KV, GROUP)
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, WIDTH)
    row_part = off_zkv.to(tl.int64) * ROWS + row
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([WIDTH], tl.float32)
    for first_split in range(0, NUM_SPLITS, BLOCK_S):
        splits = first_split + offs_s
        split_ok = splits < NUM_SPLITS
        part = splits.to(tl.int64) * Z * H_KV * ROWS + row_part
        lse_s = tl.load(LSE_ACC + part, mask=split_ok, other=-float("inf"))
        o_s = tl.load(O_ACC + part[:, None] * WIDTH + offs_d[None, :],
                      mask=split_ok[:, None], other=0.0)
        m_new = tl.maximum(m_i, tl.max(lse_s, 0))
        m_sub = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_sub)
        weight = tl.exp(lse_s - m_sub)
        l_i = l_i * alpha + tl.sum(weight, 0)
        acc = acc * alpha + tl.sum(o_s * weight[:, None], 0)
        m_i = m_new
    lse = m_i + tl.log(l_i)
    o = acc * (1.0 / tl.where(l_i > 0, l_i, 1.0))
    out = O + _out_rows(off_z, token, head, stride_oz, stride_on, stride_oh) + offs_d
    if WIDTH > HEAD_DIM:
        tl.store(out, o.to(O.dtype.element_ty), mask=offs_d < HEAD_DIM)
    else:
        tl.store(out, o.to(O.dtype.element_ty))
    tl.store(LSE + _lse_rows(off_z, token, head, H_KV, GROUP, N_Q), lse)


@tile.jit(launch=tile.Launch(grid=("cdiv(N_NEW, BLOCK_T)", "Z * H_KV"), keys=("BLOCK_D",)),
          do_not_specialize=("stride_kp", "stride_kn", "stride_kh", "stride_kd", "stride_vp",
                             "stride_vn", "stride_vh", "stride_vd", "stride_knz", "stride_knn",
                             "stride_knh", "stride_vnz", "stride_vnn", "stride_vnh",
                             "stride_bt", "Z", "H_KV", "N_NEW", "PAGE_SIZE", "HEAD_DIM",
                             "MAX_KEYS"))
def kv_append(K, V, K_NEW, V_NEW, BLOCK_TABLE, CACHE_SEQLENS, KV_LENS, stride_kp, stride_kn,
              stride_kh, stride_kd, stride_vp, stride_vn, stride_vh, stride_vd, stride_knz,
              stride_knn, stride_knh, stride_vnz, stride_vnn, stride_vnh, stride_bt, Z, H_KV,
              N_NEW, PAGE_SIZE, HEAD_DIM, MAX_KEYS, BLOCK_T: tl.constexpr,
              BLOCK_D: tl.constexpr):
    """BLOCK_T new tokens of one K/V head of one sequence a program: one
    launch for both tensors and the lengths, where PyTorch's indexed
    assignment took several a tensor (a decoding step's host time).  A key
    at or past MAX_KEYS (the cache's tokens a sequence) stops the kernel
    with an assertion and is not written: through the block table it would
    land in another sequence's cache (the host cannot read CUDA lengths
    without waiting for them)."""
    off_zkv = tl.program_id(1)
    off_z = off_zkv // H_KV
    off_kv = off_zkv % H_KV
    cache_len = tl.load(CACHE_SEQLENS + off_z)
    if (tl.program_id(0) == 0) & (off_kv == 0):
        tl.store(KV_LENS + off_z, cache_len + N_NEW)
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    keys = cache_len + tokens
    tl.device_assert(keys < MAX_KEYS, "cache_seqlens + seqlen_new exceeds the cache's tokens",
                     mask=tokens < N_NEW)
    token_ok = (tokens < N_NEW) & (keys < MAX_KEYS)
    mask = token_ok[:, None] & (offs_d < HEAD_DIM)[None, :]
    table_row = off_z.to(tl.int64) * stride_bt
    _append_rows(K, K_NEW, BLOCK_TABLE, table_row, keys, tokens, token_ok, off_z, off_kv,
                 (stride_kp, stride_kn, stride_kh, stride_kd),
                 (stride_knz, stride_knn, stride_knh), PAGE_SIZE, offs_d, mask)
    _append_rows(V, V_NEW, BLOCK_TABLE, table_row, keys, tokens, token_ok, off_z, off_kv,
                 (stride_vp, stride_vn, stride_vh, stride_vd),
                 (stride_vnz, stride_vnn, stride_vnh), PAGE_SIZE, offs_d, mask)


@tile.jit
def _append_rows(CACHE, NEW, BLOCK_TABLE, table_row, keys, tokens, token_ok, off_z, off_kv,
                 cache_strides, new_strides, PAGE_SIZE, offs_d, mask):
    """kv_append's rows of one tensor: token t of NEW (sequence off_z, head
    off_kv; strides (sequence, token, head)) to key keys[t] of the cache
    (strides (page, row, head, feature)), through the block table."""
    stride_p, stride_n, stride_h, stride_d = cache_strides
    stride_nz, stride_nn, stride_nh = new_strides
    new_rows = off_z.to(tl.int64) * stride_nz + tokens.to(tl.int64) * stride_nn \
        + off_kv.to(tl.int64) * stride_nh
    x = tl.load(NEW + new_rows[:, None] + offs_d[None, :], mask=mask)
    rows = _key_rows(BLOCK_TABLE, table_row, keys, token_ok, PAGE_SIZE, stride_p, stride_n) \
        + off_kv.to(tl.int64) * stride_h
    tl.store(CACHE + rows[:, None] + offs_d[None, :].to(tl.int64) * stride_d, x, mask=mask)
