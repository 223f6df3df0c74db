"""FlashAttention forward and backward, with grouped K/V heads, unequal
query and key lengths, and causal and sliding-window masks.

Q, O (and dO, dQ) are [Z, H, N_CTX, HEAD_DIM] with strides in elements
(stride_z, stride_h, stride_n); K and V are [Z, H_KV, N_KV, HEAD_DIM] with
strides (stride_kz, stride_kh, stride_kn); the last dimension is
contiguous.  H_KV divides H: query head h reads K/V head h // (H // H_KV)
(grouped-query attention; multi-query when H_KV is 1).  LSE is contiguous
fp32 [Z * H, MAX_N_CTX].  The backward's LSE_LOG2 (LSE * log2(e)) and DELTA
are fp32 [Z * H, stats_stride(MAX_N_CTX)]: rows 64-byte aligned, so that
the TMA can copy their blocks, the preprocess writing every row up to
MAX_N_CTX (zeros past a sequence's queries).  Every kernel takes BLOCK_D,
its blocks' width: HEAD_DIM (0), or a wider one whose tiles a ragged head
dim runs on (96 on 128's): the blocks read zeros past HEAD_DIM and nothing
is stored there.

- attn_fwd: grid (cdiv(N_CTX, BLOCK_M), Z * H), or with PERSISTENT
  programs an SM at most that many programs, each taking query blocks in
  turn, causal ones in pairs of equal work (_fwd_grid).  Softmax in base 2
  with sm_scale * log2(e) folded into the scores; LSE is written in natural
  log: LSE[i] = log(sum_j exp(sm_scale * q_i . k_j)) over the keys row i
  sees.
- attn_bwd_preprocess: DELTA[i] = sum_d O[i, d] * dO[i, d], LSE_LOG2[i] =
  LSE[i] * log2(e), and zeros in DQ_ACC, grid (cdiv(MAX_N_CTX, BLOCK_M),
  Z * H).
- attn_bwd: grid (cdiv(N_KV, BLOCK_N1), Z * H); program p computes dK, dV
  of key block p for one query head (DK, DV are [Z, H, N_KV, HEAD_DIM]
  with strides (stride_dkz, stride_dkh, stride_dkn): with grouped heads
  the caller sums each group's), and adds, with atomic adds, its keys' part
  of dQ / sm_scale to DQ_ACC, fp32, N_CTX * BLOCK_D elements a head in the
  order _dq_acc_offsets gives (as FlashAttention-2 does: S and dP are
  computed once, and dQ accumulates in an order of its own).
- attn_bwd_postprocess: dQ = DQ_ACC * sm_scale in dQ's type and strides
  (dQ comes first: the runner picks variants by their first pointer), grid
  (cdiv(N_CTX, BLOCK_M), Z * H).
- attn_bwd_dq (the deterministic backward, with attn_bwd's variants
  without DQ, which add nothing to DQ_ACC): dQ of a query block a program,
  dS K summed over its keys in one order, no atomics, grid (cdiv(N_CTX,
  BLOCK_M), Z * H); in place of attn_bwd_postprocess.

Every N_CTX and N_KV works: blocks that cross them are masked, in stages
of their own so that full blocks run without masks.

SOFTCAP caps the scores as Gemma 2 does: sm_scale * q . k becomes softcap *
tanh(sm_scale * q . k / softcap), for softcap > 0, the fp32 after the
offsets (the other variants take it and ignore it).

DROPOUT drops each probability of the softmax with probability dropout_p
(an fp32 in [0, 1) after ALIBI_SLOPES) and scales the kept ones by 1 / (1 -
dropout_p), as FlashAttention's training does: O = (P * keep / (1 -
dropout_p)) V, LSE that of P.  Whether query i (counted from its sequence's
first) keeps key j in query head h of sequence z is a pure function of
(DROPOUT_SEEDS[z], h, i, j) (_dropout_keep: Philox 2x32-10), so the
backward draws the mask the forward drew, and no launch's split of the
batch changes it.

Masks, by two i32 offsets of any sign that follow N_KV in both kernels
(the variants without a mask take them too and ignore them): CAUSAL hides
key j from query i when j > i + causal_offset; WINDOW (only with CAUSAL)
also when j < i + window_offset, a band of keys a query sees.  Offset 0 is
the usual lower triangle; FlashAttention's bottom-right alignment of
N_CTX queries to N_KV keys is causal_offset = N_KV - N_CTX, and its window
(left, right) the band [N_KV - N_CTX - left, N_KV - N_CTX + right].  A row
that sees no key gets O = 0 and LSE = -inf (the log of an empty sum) and
adds nothing to dQ, dK, dV.  The kernels clamp the offsets to [-N_CTX,
N_KV] (beyond those bounds a bound hides every key or none), so the index
arithmetic stays within i32.  Causal programs map their ids to blocks
longest first (_longest_first), the grid stays the same.
"""

import tile
import tile.language as tl
from tile.language.random import philox2x32

LOG2E = tl.constexpr(1.4426950408889634)   # log2(e)
LN2 = tl.constexpr(0.6931471805599453)     # ln(2)
# The forward's p = 2^(score - m_i) stays below 2^RESCALE_HEADROOM: 256 is
# far inside fp16, bf16 and the fp32 sums.
RESCALE_HEADROOM = tl.constexpr(8.0)
# LSE_LOG2's and DELTA's rows start every STATS_ALIGNMENT elements (64
# bytes): the TMA copies blocks of rows whose stride is a multiple of 16
# bytes.
STATS_ALIGNMENT = tl.constexpr(16)


def stats_stride(max_n_ctx):
    """The row stride (elements) of the backward's LSE_LOG2 and DELTA for
    sequences of at most max_n_ctx queries: what _stats_stride computes in
    the kernels, for the callers that allocate them."""
    return -(-max_n_ctx // STATS_ALIGNMENT.value) * STATS_ALIGNMENT.value


@tile.jit
def _heads(off_hz, H, H_KV):
    """(batch, query head, K/V head) of program head off_hz = batch * H +
    query head: H // H_KV consecutive query heads share a K/V head."""
    off_z = off_hz // H
    off_h = off_hz % H
    return off_z, off_h, off_h // (H // H_KV)


@tile.jit
def _offset(off_z, off_h, stride_z, stride_h):
    """Elements from the base of a tensor to head off_h of batch off_z, in
    64 bits so that large tensors do not overflow."""
    return off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h


@tile.jit
def _head_offset(off_hz, H, stride_z, stride_h):
    """_offset of head off_hz = batch * H + head."""
    return _offset(off_hz // H, off_hz % H, stride_z, stride_h)


@tile.jit
def _stats_stride(MAX_N_CTX):
    """stats_stride(MAX_N_CTX) in a kernel: a multiple of 16 the TMA's
    descriptors compute the same way (cdiv)."""
    return (MAX_N_CTX + (STATS_ALIGNMENT - 1)) // STATS_ALIGNMENT * STATS_ALIGNMENT


@tile.jit
def _sequence(CU_SEQLENS, off_z, n, VARLEN):
    """(first row, rows) of batch off_z's sequence: from cu_seqlens when
    VARLEN is 1 (packed sequences), else (VARLEN 0) 0 and n.  Read either
    way, without a branch (pure scalar arithmetic and loads, which a
    producer warpgroup recomputes): not packed, CU_SEQLENS may point at any
    readable int32, whose value is multiplied by 0."""
    start = tl.load(CU_SEQLENS + off_z * VARLEN) * VARLEN
    end = tl.load(CU_SEQLENS + (off_z + 1) * VARLEN) * VARLEN
    return start, end - start + (1 - VARLEN) * n


@tile.jit
def _score_scales(sm_scale, softcap, SOFTCAP: tl.constexpr):
    """(qk_scale, cap_scale): the scores in base 2 are q . k * qk_scale, or
    with SOFTCAP tanh(q . k * cap_scale) * qk_scale."""
    if SOFTCAP:
        return softcap * LOG2E, sm_scale / softcap
    return sm_scale * LOG2E, 1.0


@tile.jit
def _band(query, key, causal_offset, window_offset, CAUSAL_MASK: tl.constexpr,
          WINDOW_MASK: tl.constexpr):
    """Whether query i sees key j (broadcast tensors): j <= i + causal_offset
    under CAUSAL_MASK, and j >= i + window_offset under WINDOW_MASK."""
    if CAUSAL_MASK and WINDOW_MASK:
        return (query + causal_offset >= key) & (query + window_offset <= key)
    if CAUSAL_MASK:
        return query + causal_offset >= key
    return query + window_offset <= key


@tile.jit
def _keys_seen(offs_m, offs_n, causal_offset, window_offset, kv_len,
               CAUSAL_MASK: tl.constexpr, WINDOW_MASK: tl.constexpr):
    """The scores a masked stage of the forward (and of attn_bwd_dq) keeps,
    queries offs_m as rows and keys offs_n as columns: keys before kv_len,
    and the band (a window needs the causal bound).  A stage masks only if
    its blocks may reach past kv_len or cut the band, so every causal one
    takes the key tail too, folded into each row's bound: one compare and
    one select a score."""
    tl.static_assert(CAUSAL_MASK or not WINDOW_MASK, "a window needs the causal bound")
    if not CAUSAL_MASK:
        return offs_n[None, :] < kv_len
    last = tl.minimum(offs_m + causal_offset, kv_len - 1)
    if WINDOW_MASK:
        # The band [first, last] as one unsigned compare: below first,
        # key - first wraps past every count.
        first = offs_m + window_offset
        count = tl.maximum(last - first + 1, 0)
        return (offs_n[None, :] - first[:, None]).to(tl.uint32) < count.to(tl.uint32)[:, None]
    return offs_n[None, :] <= last[:, None]


@tile.jit
def _visible(query, key, query_ok, causal_offset, window_offset, kv_len,
             CAUSAL_MASK: tl.constexpr, WINDOW_MASK: tl.constexpr,
             QUERY_MASK: tl.constexpr):
    """The scores a masked stage of the backward keeps, in the orientation
    of the broadcast indices query and key (either may index the rows):
    the band (_band), keys before kv_len under a window, and queries with
    query_ok under QUERY_MASK."""
    if CAUSAL_MASK or WINDOW_MASK:
        visible = _band(query, key, causal_offset, window_offset, CAUSAL_MASK, WINDOW_MASK)
        if WINDOW_MASK:
            visible = visible & (key < kv_len)
        if QUERY_MASK:
            visible = visible & query_ok
        return visible
    return query_ok


@tile.jit
def _row_block(base, start_n, stride_n, N_CTX, HEAD_DIM: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr = 0):
    """The (BLOCK_N, BLOCK_D) block of rows [start_n, start_n + BLOCK_N)
    of a head's (N_CTX, HEAD_DIM) matrix at base (BLOCK_D 0: HEAD_DIM;
    wider, its columns past HEAD_DIM lie outside the matrix)."""
    return tl.make_block_ptr(base=base, shape=(N_CTX, HEAD_DIM), strides=(stride_n, 1),
                             offsets=(start_n, 0),
                             block_shape=(BLOCK_N, BLOCK_D if BLOCK_D else HEAD_DIM),
                             order=(1, 0))


@tile.jit
def _load_block(block, ROW_AXIS: tl.constexpr, ROWS: tl.constexpr, HEAD_TAIL: tl.constexpr):
    """The block's tile, zeros past its tensor along the rows' axis
    (ROW_AXIS, 0 or 1) when ROWS, and along the head dim's (the other) when
    HEAD_TAIL: it ends inside the block.  No check where neither."""
    if ROWS and HEAD_TAIL:
        return tl.load(block, boundary_check=(0, 1), padding_option="zero")
    if ROWS:
        return tl.load(block, boundary_check=(ROW_AXIS,), padding_option="zero")
    if HEAD_TAIL:
        return tl.load(block, boundary_check=(1 - ROW_AXIS,), padding_option="zero")
    return tl.load(block)


@tile.jit
def _longest_first(heads_per_group):
    """(rank, head) of this program in a causal kernel, whose programs' work
    falls with rank: rank 0 is the longest.

    The GPU starts programs in the order of their linear id, program_id(0)
    fastest.  In natural order the longest blocks of the last heads start
    last and leave SMs idle at the end (13% of them over a d128 forward, in
    a model of the H100).  Here ids are dealt out heads_per_group heads at a
    time: rank 0 of each head of the group, then rank 1, and so on, so the
    last programs to start are short ones; a group of few heads keeps the
    programs running at once on few heads, whose K and V stay in L2.
    """
    num_blocks = tl.num_programs(0)
    pid = tl.program_id(0) + tl.program_id(1) * num_blocks
    first_head = pid // (heads_per_group * num_blocks) * heads_per_group
    heads = tl.minimum(tl.num_programs(1) - first_head, heads_per_group)
    r = pid - first_head * num_blocks
    return r // heads, first_head + r % heads


@tile.jit
def _dq_half_rows(m, BLOCK_D: tl.constexpr):
    """Where row m of DQ_ACC starts in the order of d128's halves: its group
    of 64 rows, then its row within a half (as in a group of eight)."""
    r = m & 63
    return (m >> 6) * (64 * BLOCK_D) + (r >> 3) * 512 + (r & 7) * 8


@tile.jit
def _dq_acc_offsets(start_m, N_CTX, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
                    MAYBE_TAIL: tl.constexpr, COLS: tl.constexpr = 0,
                    FIRST_COL: tl.constexpr = 0):
    """Where DQ_ACC keeps dQ of the query block at start_m (a multiple of
    eight) of a head: rows in groups of eight, each group's 8 x 8 tiles in
    turn, each tile row by row.  An mma accumulator gives a warp 8 rows x 8
    columns an instruction, so each of the backward's atomic adds covers 256
    contiguous bytes instead of 32 bytes of eight rows each; and a warp's
    rows of a block are whole runs, which on Hopper one bulk reduction
    each adds (the compiler's bulk_reductions: the offsets below place
    each bit of a row and column index at its own bit).  At d128 the rows
    go in groups of 64, each group's two halves of 64 columns in turn,
    each half as above: the d128 backward's two warpgroups each hold a
    half, one run of 16 KiB.  The rows past the last whole group of 64 (of
    8 below d128) keep the groups of eight, and the last group, when N_CTX
    is not a multiple of eight, stays row-major (DQ_ACC needs no padding);
    only a block with MAYBE_TAIL (or, at d128, of fewer than 64 rows) can
    hold them.  COLS (all when 0) columns from FIRST_COL: the part of the
    block one of d256's half products adds.  BLOCK_D: DQ_ACC's row
    length, the blocks' width (the head dim, or more)."""
    tl.static_assert(BLOCK_M % 8 == 0 and BLOCK_D % 8 == 0,
                     "dQ's blocks must be whole 8 x 8 tiles")
    HALVES: tl.constexpr = BLOCK_D == 128
    tl.static_assert(COLS == 0 or not HALVES, "d128's blocks are whole rows of halves")
    rows = tl.arange(0, BLOCK_M)
    cols = FIRST_COL + tl.arange(0, BLOCK_D if COLS == 0 else COLS)
    if HALVES:
        # A half of a group of 64 rows: 64 x 64 elements, as a group of 8.
        half_cols = (cols >> 6) * 4096 + ((cols & 63) >> 3) * 64 + (cols & 7)
    if HALVES and not MAYBE_TAIL and BLOCK_M % 64 == 0:
        # start_m is a multiple of 64: its groups begin at rows = 0.
        return start_m * BLOCK_D + _dq_half_rows(rows, BLOCK_D)[:, None] + half_cols[None, :]
    # start_m is a multiple of eight: its groups begin at rows = 0.
    row_start = (rows >> 3) * (8 * BLOCK_D) + (rows & 7) * 8
    col_offset = (cols >> 3) * 64 + (cols & 7)
    grouped = start_m * BLOCK_D + row_start[:, None] + col_offset[None, :]
    # A block of fewer than 64 rows (a block-size sweep's) may share a last,
    # partial group of 64 with the tail: where each row goes is decided row
    # by row, as in the tail.
    if MAYBE_TAIL or HALVES:
        m = start_m + rows[:, None]
        if HALVES:
            grouped = tl.where(m < (N_CTX >> 6) * 64,
                               _dq_half_rows(m, BLOCK_D) + half_cols[None, :], grouped)
        if MAYBE_TAIL:
            grouped = tl.where(m < (N_CTX >> 3) * 8, grouped, m * BLOCK_D + cols[None, :])
    return grouped


# --------------------------------------------------------------------------
# Forward
# --------------------------------------------------------------------------

@tile.jit
def _alibi(ALIBI_SLOPES, off_z, off_h, H, q_len, kv_len, ALIBI: tl.constexpr):
    """(slope in base 2, diagonal) of ALiBi's bias for query head off_h of
    sequence off_z: slopes [Z, H] fp32, contiguous; the diagonal aligned
    bottom-right, kv_len - q_len, as FlashAttention's.  (0, 0) without."""
    if ALIBI:
        return tl.load(ALIBI_SLOPES + off_z * H + off_h) * LOG2E, kv_len - q_len
    return 0.0, 0


@tile.jit
def _alibi_distance(query, key, diagonal):
    """|i + diagonal - j| as float32, [len(query), len(key)]: ALiBi's
    distance of key j from query i's bottom-right diagonal."""
    return tl.abs(query[:, None] + diagonal - key[None, :]).to(tl.float32)


@tile.jit
def _dropout_seed(DROPOUT_SEEDS, off_z, DROPOUT: tl.constexpr):
    """The key of sequence off_z's dropout mask; without DROPOUT the seeds
    are not read."""
    if DROPOUT:
        return tl.load(DROPOUT_SEEDS + off_z)
    return 0


@tile.jit
def _without_bit3(index):
    """index with its bit 3 taken out (the bits above it shifted down one):
    the counter of the two indices i and i ^ 8, dense."""
    return ((index >> 4) << 3) | (index & 7)


@tile.jit
def _dropout_keep(query0, queries, key0, keys, dropout_p, seed, head):
    """Whether dropout keeps the probability of query i = query0 + queries
    and key j = key0 + keys of query head `head` (query0 and key0 multiples
    of 16; queries and keys int32 offsets that broadcast to the scores'
    shape, in either orientation).  One Philox 2x32-10 call serves the four
    scores of i and j with bit 3 either way: its counter is (j', i' ^
    hi32(seed)), x' the index x without its bit 3, its key lo32(seed) +
    head; word j & 8 of it, half i & 8 (the high 16 bits when set), over
    2^16, is the uniform kept when at least dropout_p.  Those four scores
    lie in one thread in every wgmma and mma.sync accumulator layout,
    queries as rows or keys as rows (rows r and r + 8, columns c and c +
    8); with the block starts apart from the offsets, the counters are the
    same registers for all four and LLVM's common-subexpression
    elimination draws once for them."""
    seed = seed.to(tl.int64)
    key_counter = _without_bit3(key0) + _without_bit3(keys)
    query_counter = (_without_bit3(query0) + _without_bit3(queries)) ^ (seed >> 32).to(tl.int32)
    key_counter, query_counter = tl.broadcast(key_counter, query_counter)
    word0, word1 = philox2x32((seed + head).to(tl.int32), key_counter, query_counter)
    word = tl.where((keys & 8) != 0, word1, word0)
    half = tl.where((queries & 8) != 0, word >> 16, word) & 0xFFFF
    return half.to(tl.float32) * (1.0 / 65536.0) >= dropout_p


@tile.jit
def _finite_max(m, CAUSAL_MASK: tl.constexpr):
    """The row max the exponentials subtract.  With the causal mask a row
    that has seen no key yet has m = -inf: subtract 0 instead, so that p and
    alpha are 0 rather than exp2(-inf + inf).  (Without it, the first block
    a row sees always holds a visible key.)"""
    if CAUSAL_MASK:
        return tl.where(m == -float("inf"), 0.0, m)
    return m


@tile.jit
def _key_stages(m0, q_len, kv_len, causal_offset, window_offset, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, WINDOW: tl.constexpr):
    """The key blocks of the query block of rows [m0, m0 + BLOCK_M), in
    stages: (off, low, first, left_end, full_end, diag_end).  off and low
    are the causal and window offsets clamped to [-q_len, kv_len] (0 when
    absent).  With CAUSAL and WINDOW: [first, left_end) cut by the band's
    lower bound, [left_end, full_end) seen whole by every row, [full_end,
    diag_end) cut by the diagonal (a narrow band may cut a block on both
    sides: the masked stages apply both bounds).  With CAUSAL alone:
    [0, full_end) whole, [full_end, diag_end) the diagonal with the key
    tail.  Without: [0, full_end) whole blocks, [full_end, diag_end =
    kv_len) the key tail."""
    if CAUSAL:
        off = tl.minimum(tl.maximum(causal_offset, -q_len), kv_len)
        # Keys j <= m0 + off, in whole blocks below kv_len, are below every
        # row's causal bound (offset 0: the keys before row m0).
        full_end = tl.maximum(m0 + off + 1, 0) // BLOCK_N * BLOCK_N
        full_end = tl.minimum(full_end, kv_len // BLOCK_N * BLOCK_N)
        # The end of the last key the last row sees, and of the keys.
        diag_end = tl.minimum(m0 + BLOCK_M + off, kv_len)
        if WINDOW:
            low = tl.minimum(tl.maximum(window_offset, -q_len), kv_len)
            # From the block holding the first key row m0 sees to the first
            # block above every row's lower bound.
            first = tl.maximum(m0 + low, 0) // BLOCK_N * BLOCK_N
            left_end = (tl.maximum(m0 + BLOCK_M - 1 + low, 0) + BLOCK_N - 1) // BLOCK_N
            # (All three empty, from `first` on, when the band misses the
            # keys: no stage may start before `first`.)
            left_end = tl.maximum(tl.minimum(left_end * BLOCK_N, diag_end), first)
            full_end = tl.maximum(full_end, left_end)
            return off, low, first, left_end, full_end, diag_end
        return off, 0, 0, 0, full_end, diag_end
    return 0, 0, 0, 0, kv_len // BLOCK_N * BLOCK_N, kv_len


@tile.jit
def _scale_rows(l_i, alpha, ROW_SUM_PARTS: tl.constexpr):
    """l_i times its rows' factors alpha, l_i whole rows or in parts."""
    if ROW_SUM_PARTS:
        return l_i * alpha[:, None]
    return l_i * alpha


@tile.jit
def _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, lo, hi, offs_m, scores,
                    BLOCK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr,
                    KEY_MASK: tl.constexpr, RESCALE_VOTE: tl.constexpr = True,
                    WINDOW_MASK: tl.constexpr = False, SOFTCAP: tl.constexpr = False,
                    ALIBI: tl.constexpr = False, DROPOUT: tl.constexpr = False,
                    ROW_SUM_PARTS: tl.constexpr = 0, HEAD_TAIL: tl.constexpr = False):
    """Online softmax over the key blocks [lo, hi), BLOCK_N keys at a time.

    m_i is what the exponentials subtract: the running row max of the scaled
    scores (base 2), or less than it by at most RESCALE_HEADROOM; l_i is the
    row sum of 2^(score - m_i), acc the unnormalised output.  CAUSAL_MASK
    hides keys j > i + causal_offset, WINDOW_MASK keys j < i +
    window_offset; KEY_MASK hides keys at or past kv_len (and bounds the
    loads).  RESCALE_VOTE: the rows rescale together, behind one vote of
    the program; else each row on its own, without a vote, so that
    warpgroups owning different rows never wait for one another.  scores:
    (qk_scale, cap_scale, causal_offset, window_offset, kv_len, slope,
    alibi_diagonal); the scores are q . k * qk_scale in base 2, or with
    SOFTCAP tanh(q . k * cap_scale) * qk_scale (then qk_scale is softcap *
    log2(e)); with ALIBI minus slope * |i + alibi_diagonal - j| (slope in
    base 2).  DROPOUT: P V takes the probabilities _dropout_keep keeps
    (dropout_p, seed, head, query0: scores' last four, query0 the first of
    offs_m; l_i sums them all, the caller scales).  ROW_SUM_PARTS: l_i is
    [BLOCK_M, ROW_SUM_PARTS], each row's sum in parts (_attn_fwd_block).
    HEAD_TAIL: the head dim ends inside the blocks, which read zeros past
    it."""
    (qk_scale, cap_scale, causal_offset, window_offset, kv_len, slope, alibi_diagonal,
     dropout_p, seed, head, query0) = scores
    K_block_ptr = tl.advance(K_block_ptr, (0, lo))
    V_block_ptr = tl.advance(V_block_ptr, (lo, 0))
    # A row may see no key of a block (only behind a mask): its max is -inf.
    ROW_MAY_BE_EMPTY: tl.constexpr = CAUSAL_MASK or WINDOW_MASK
    for start_n in range(lo, hi, BLOCK_N):
        k = _load_block(K_block_ptr, 1, KEY_MASK, HEAD_TAIL)
        v = _load_block(V_block_ptr, 0, KEY_MASK, HEAD_TAIL)
        qk = tl.dot(q, k)
        if SOFTCAP:
            qk = tl.math.tanh(qk * cap_scale)
        score_scale = qk_scale
        if ALIBI:
            # The bias is added to the scaled scores, which the max and the
            # exponentials below then take as they are.
            qk = qk * qk_scale - slope * _alibi_distance(offs_m, start_n + tl.arange(0, BLOCK_N),
                                                         alibi_diagonal)
            score_scale = 1.0
        if CAUSAL_MASK or WINDOW_MASK or KEY_MASK:
            qk = tl.where(_keys_seen(offs_m, start_n + tl.arange(0, BLOCK_N), causal_offset,
                                     window_offset, kv_len, CAUSAL_MASK, WINDOW_MASK),
                          qk, -float("inf"))
        # The scale (unless ALiBi's bias took it above) goes into the max
        # (qk_scale > 0 keeps the order) and into one fma per score: qk *
        # qk_scale - m_i.
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * score_scale)
        # Lazy rescaling: m_i, what the exponentials subtract, follows the
        # row max only where it grew by more than RESCALE_HEADROOM, so p
        # stays below 2^RESCALE_HEADROOM.  After the first blocks no row's
        # max grows that much, and the block skips the rescale of acc (a
        # multiply an element) behind one CTA-wide vote (bar.red.or).
        grow = m_ij > m_i + RESCALE_HEADROOM
        if RESCALE_VOTE:
            if tl.max(grow):
                m_new = tl.where(grow, m_ij, m_i)
                alpha = tl.math.exp2(m_i - _finite_max(m_new, ROW_MAY_BE_EMPTY))
                l_i = _scale_rows(l_i, alpha, ROW_SUM_PARTS)
                acc = acc * alpha[:, None]
                m_i = m_new
        else:
            # alpha is 1 in the rows that keep m_i.
            m_new = tl.where(grow, m_ij, m_i)
            alpha = tl.math.exp2(m_i - _finite_max(m_new, ROW_MAY_BE_EMPTY))
            l_i = _scale_rows(l_i, alpha, ROW_SUM_PARTS)
            acc = acc * alpha[:, None]
            m_i = m_new
        m_sub = _finite_max(m_i, ROW_MAY_BE_EMPTY)
        p = tl.math.exp2(qk * score_scale - m_sub[:, None])
        if ROW_SUM_PARTS:
            # Column c of a block goes to part c % ROW_SUM_PARTS, a part
            # the thread holding column c holds (the accumulator's column
            # pairs on four lanes): the groups of columns are summed in
            # each thread's registers.
            l_i = l_i + tl.sum(tl.reshape(p, [p.shape[0], BLOCK_N // ROW_SUM_PARTS,
                                              ROW_SUM_PARTS]), 1)
        else:
            l_i = l_i + tl.sum(p, 1)
        if DROPOUT:
            p = tl.where(_dropout_keep(query0, tl.arange(0, offs_m.shape[0])[:, None], start_n,
                                       tl.arange(0, BLOCK_N)[None, :], dropout_p, seed, head),
                         p, 0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
    return acc, l_i, m_i


def _fwd_grid(meta):
    """attn_fwd's grid: a program a query block and head, or with PERSISTENT
    programs an SM, at most as many as there are blocks (pairs of blocks,
    causal), each taking them in turn."""
    if meta["PERSISTENT"] and meta["CAUSAL"]:
        return "min(cdiv(cdiv(MAX_N_CTX, BLOCK_M), 2) * Z * H, PERSISTENT * NUM_SMS)"
    if meta["PERSISTENT"]:
        return "min(cdiv(MAX_N_CTX, BLOCK_M) * Z * H, PERSISTENT * NUM_SMS)"
    return "cdiv(MAX_N_CTX, BLOCK_M)", "Z * H"


@tile.jit(launch=tile.Launch(grid=_fwd_grid,
                             keys=("HEAD_DIM", "CAUSAL", "WINDOW", "SOFTCAP", "ALIBI",
                                   "DROPOUT"),
                             length="MAX_N_CTX"))
def attn_fwd(Q, K, V, O, LSE, sm_scale, stride_z, stride_h, stride_n,
             stride_kz, stride_kh, stride_kn, Z, H, H_KV, N_CTX, N_KV,
             causal_offset, window_offset, softcap, CU_SEQLENS_Q, CU_SEQLENS_K,
             MAX_N_CTX, VARLEN, ALIBI_SLOPES, dropout_p, DROPOUT_SEEDS,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             CAUSAL: tl.constexpr, WINDOW: tl.constexpr = False,
             SOFTCAP: tl.constexpr = False, HEAD_GROUP: tl.constexpr = 8,
             RESCALE_VOTE: tl.constexpr = True, ALIBI: tl.constexpr = False,
             DROPOUT: tl.constexpr = False, PERSISTENT: tl.constexpr = 0,
             ROW_SUM_PARTS: tl.constexpr = 0, BLOCK_D: tl.constexpr = 0):
    tl.static_assert(BLOCK_M % BLOCK_N == 0, "BLOCK_M must be a multiple of BLOCK_N")
    tl.static_assert(BLOCK_D == 0 or BLOCK_D >= HEAD_DIM, "BLOCK_D must hold HEAD_DIM")
    tl.static_assert(not (ALIBI and SOFTCAP), "ALiBi with capped scores is not supported")
    tl.static_assert(HEAD_GROUP >= 1, "HEAD_GROUP must be at least 1")
    tl.static_assert(CAUSAL or not WINDOW, "a window is a band: WINDOW needs CAUSAL")
    # What every query block reads of the call, whichever blocks a program
    # takes.
    call = (Q, K, V, O, LSE, sm_scale, stride_z, stride_h, stride_n, stride_kz, stride_kh,
            stride_kn, H, H_KV, N_CTX, N_KV, causal_offset, window_offset, softcap,
            CU_SEQLENS_Q, CU_SEQLENS_K, MAX_N_CTX, VARLEN, ALIBI_SLOPES, dropout_p,
            DROPOUT_SEEDS)
    if PERSISTENT and CAUSAL:
        # Causal blocks in pairs of equal work: query block r and its mirror
        # num_blocks - 1 - r of one head see num_blocks + 1 key blocks
        # together (the middle block of an odd count runs alone), so
        # programs taking pairs num_programs apart stay balanced (a fixed
        # deal of single blocks lost 8-32% from 4k: docs/performance.md).
        num_blocks = tl.cdiv(MAX_N_CTX, BLOCK_M)
        pairs = (num_blocks + 1) // 2
        for unit in range(tl.program_id(0), pairs * Z * H, tl.num_programs(0)):
            off_hz = unit // pairs
            r = unit % pairs
            alone = ((num_blocks % 2) == 1) & (r == pairs - 1)
            for half in range(0, 2 - alone.to(tl.int32)):
                start_m = tl.where(half == 0, num_blocks - 1 - r, r)
                _attn_fwd_block(call, start_m, off_hz, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, WINDOW,
                                SOFTCAP, RESCALE_VOTE, ALIBI, DROPOUT, ROW_SUM_PARTS,
                                BLOCK_D if BLOCK_D else HEAD_DIM)
        return
    if PERSISTENT:
        # Block index i is query block i % num_blocks of head i // num_blocks;
        # program p takes p, p + num_programs, ...: the producer copies a
        # block's first Q, K and V while the consumers finish the one before.
        num_blocks = tl.cdiv(MAX_N_CTX, BLOCK_M)
        for index in range(tl.program_id(0), num_blocks * Z * H, tl.num_programs(0)):
            start_m = index % num_blocks
            off_hz = index // num_blocks
            _attn_fwd_block(call, start_m, off_hz, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, WINDOW,
                            SOFTCAP, RESCALE_VOTE, ALIBI, DROPOUT, ROW_SUM_PARTS,
                            BLOCK_D if BLOCK_D else HEAD_DIM)
        return
    if CAUSAL:
        # The last query block sees the most keys.
        rank, off_hz = _longest_first(HEAD_GROUP)
        start_m = tl.num_programs(0) - 1 - rank
    else:
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
    _attn_fwd_block(call, start_m, off_hz, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, WINDOW,
                    SOFTCAP, RESCALE_VOTE, ALIBI, DROPOUT, ROW_SUM_PARTS,
                    BLOCK_D if BLOCK_D else HEAD_DIM)


@tile.jit
def _attn_fwd_block(call, start_m, off_hz, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, WINDOW: tl.constexpr,
                    SOFTCAP: tl.constexpr, RESCALE_VOTE: tl.constexpr, ALIBI: tl.constexpr,
                    DROPOUT: tl.constexpr, ROW_SUM_PARTS: tl.constexpr,
                    BLOCK_D: tl.constexpr):
    """attn_fwd's query block start_m of head off_hz: O's and LSE's rows
    (call: attn_fwd's run-time arguments, Q to DROPOUT_SEEDS but Z).
    BLOCK_D: the blocks' width, HEAD_DIM (the tensors' head dim) or more:
    the columns past HEAD_DIM read as zeros (adding nothing to the scores)
    and are not stored.
    ROW_SUM_PARTS (a power of two, 0 for none): each row's sum kept as that
    many parts through the key blocks, each thread adding its own columns
    (a reshape of P that stays in its registers), the parts added once at
    the end: no shuffle a block for the sum."""
    (Q, K, V, O, LSE, sm_scale, stride_z, stride_h, stride_n, stride_kz, stride_kh, stride_kn,
     H, H_KV, N_CTX, N_KV, causal_offset, window_offset, softcap, CU_SEQLENS_Q, CU_SEQLENS_K,
     MAX_N_CTX, VARLEN, ALIBI_SLOPES, dropout_p, DROPOUT_SEEDS) = call
    off_z, off_h, off_kv = _heads(off_hz, H, H_KV)
    offset = _offset(off_z, off_h, stride_z, stride_h)
    kv_offset = _offset(off_z, off_kv, stride_kz, stride_kh)
    start_q, q_len = _sequence(CU_SEQLENS_Q, off_z, N_CTX, VARLEN)
    start_k, kv_len = _sequence(CU_SEQLENS_K, off_z, N_KV, VARLEN)
    slope, alibi_diagonal = _alibi(ALIBI_SLOPES, off_z, off_h, H, q_len, kv_len, ALIBI)
    seed = _dropout_seed(DROPOUT_SEEDS, off_z, DROPOUT)
    # Packed, the offsets are relative to each sequence's bottom-right
    # diagonal; a program past its sequence's queries sees no key.
    causal_offset += (kv_len - q_len) * VARLEN
    window_offset += (kv_len - q_len) * VARLEN
    kv_len = kv_len * (start_m * BLOCK_M < q_len).to(tl.int32)
    # Rows are counted from the sequence's first (start_q, start_k); the
    # loads' extents are the tensors' (N_CTX, N_KV): the rows a block reads
    # past its sequence's are the next sequence's, hidden by the masks.
    Q_block_ptr = tl.make_block_ptr(base=Q + offset, shape=(N_CTX, HEAD_DIM),
                                    strides=(stride_n, 1),
                                    offsets=(start_q + start_m * BLOCK_M, 0),
                                    block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    # K is read transposed: a (HEAD_DIM, N_KV) view, so q @ k needs no trans.
    K_block_ptr = tl.make_block_ptr(base=K + kv_offset, shape=(HEAD_DIM, N_KV),
                                    strides=(1, stride_kn), offsets=(0, start_k),
                                    block_shape=(BLOCK_D, BLOCK_N), order=(0, 1))
    V_block_ptr = tl.make_block_ptr(base=V + kv_offset, shape=(N_KV, HEAD_DIM),
                                    strides=(stride_kn, 1), offsets=(start_k, 0),
                                    block_shape=(BLOCK_N, BLOCK_D), order=(1, 0))
    O_block_ptr = tl.make_block_ptr(base=O + offset, shape=(start_q + q_len, HEAD_DIM),
                                    strides=(stride_n, 1),
                                    offsets=(start_q + start_m * BLOCK_M, 0),
                                    block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    HEAD_TAIL: tl.constexpr = BLOCK_D > HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    if ROW_SUM_PARTS:
        l_i = tl.zeros([BLOCK_M, ROW_SUM_PARTS], tl.float32)
    else:
        l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    qk_scale, cap_scale = _score_scales(sm_scale, softcap, SOFTCAP)
    # Rows past the sequence's are never stored.
    q = _load_block(Q_block_ptr, 0, True, HEAD_TAIL)
    off, low, first, left_end, full_end, diag_end = _key_stages(
        start_m * BLOCK_M, q_len, kv_len, causal_offset, window_offset, BLOCK_M, BLOCK_N,
        CAUSAL, WINDOW)
    scores = (qk_scale, cap_scale, off, low, kv_len, slope, alibi_diagonal, dropout_p, seed,
              off_h, start_m * BLOCK_M)
    if CAUSAL:
        if WINDOW:
            acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, first,
                                            left_end, offs_m, scores, BLOCK_N, True, True,
                                            RESCALE_VOTE, True, SOFTCAP, ALIBI, DROPOUT,
                                            ROW_SUM_PARTS, HEAD_TAIL)
            acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, left_end,
                                            full_end, offs_m, scores, BLOCK_N, False, False,
                                            RESCALE_VOTE, False, SOFTCAP, ALIBI, DROPOUT,
                                            ROW_SUM_PARTS, HEAD_TAIL)
            acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, full_end,
                                            diag_end, offs_m, scores, BLOCK_N, True, True,
                                            RESCALE_VOTE, True, SOFTCAP, ALIBI, DROPOUT,
                                            ROW_SUM_PARTS, HEAD_TAIL)
        else:
            acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, 0,
                                            full_end, offs_m, scores, BLOCK_N, False, False,
                                            RESCALE_VOTE, False, SOFTCAP, ALIBI, DROPOUT,
                                            ROW_SUM_PARTS, HEAD_TAIL)
            # Diagonal: up to the last key the last row sees, with the
            # causal mask and the key tail.  Empty when no row sees a key.
            acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, full_end,
                                            diag_end, offs_m, scores, BLOCK_N, True, True,
                                            RESCALE_VOTE, False, SOFTCAP, ALIBI, DROPOUT,
                                            ROW_SUM_PARTS, HEAD_TAIL)
    else:
        acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, 0, full_end,
                                        offs_m, scores, BLOCK_N, False, False, RESCALE_VOTE, False,
                                        SOFTCAP, ALIBI, DROPOUT, ROW_SUM_PARTS, HEAD_TAIL)
        acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, full_end,
                                        diag_end, offs_m, scores, BLOCK_N, False, True,
                                        RESCALE_VOTE, False, SOFTCAP, ALIBI, DROPOUT,
                                        ROW_SUM_PARTS, HEAD_TAIL)
    if ROW_SUM_PARTS:
        l_i = tl.sum(l_i, 1)
    # log-sum-exp in natural log: ln 2 * (m_i + log2 l_i); -inf for a row
    # that saw no key (m_i = -inf, l_i = 0).
    lse = (m_i + tl.math.log2(l_i)) * LN2
    lse_ptrs = LSE + off_hz.to(tl.int64) * MAX_N_CTX + offs_m
    tl.store(lse_ptrs, lse, mask=offs_m < q_len)
    # One division a row, then multiplies: a division an element costs
    # IEEE division's slow-path check and call each.  A row that saw no key
    # (a mask's, or a packed sequence's without keys) has acc = 0 and l_i =
    # 0: divide by 1, out 0.
    inv_l = 1.0 / tl.where(l_i > 0, l_i, 1.0)
    if DROPOUT:
        inv_l = inv_l / (1.0 - dropout_p)
    o = acc * inv_l[:, None]
    tl.store(O_block_ptr, o.to(O.dtype.element_ty),
             boundary_check=(0, 1) if HEAD_TAIL else (0,))


@tile.jit(launch=tile.Launch(grid=("cdiv(N_CTX, BLOCK_M)", "Z * H"), keys=("HEAD_DIM",),
                             length="N_CTX"))
def attn_fwd_fp8(Q, K, VT, O, LSE, DESCALE, sm_scale, stride_z, stride_h, stride_n,
                 stride_vz, stride_vh, stride_vd, stride_oz, stride_oh, stride_on,
                 Z, H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, RESCALE_VOTE: tl.constexpr = True):
    """The forward on fp8 (e4m3) Q, K and V, without a mask: O (bf16) and LSE
    of softmax(Q K^T * sm_scale) V for the real tensors DESCALE[0] * Q,
    DESCALE[1] * K and DESCALE[2] * V (per-tensor descale factors in device
    memory, as FlashAttention-3's fp8 forward takes them).  Q and K are
    [Z, H, N_CTX, HEAD_DIM] with strides (stride_z, stride_h, stride_n, 1);
    V comes transposed, VT [Z, H, HEAD_DIM, N_CTX] with strides (stride_vz,
    stride_vh, stride_vd, 1), because wgmma reads 8-bit operands with k
    (here the keys) contiguous; O has strides (stride_oz, stride_oh,
    stride_on, 1).  P is rounded to e4m3 for P V.  RESCALE_VOTE as in
    _attn_fwd_stage (off, warpgroups taking turns need not wait for one
    another's vote)."""
    tl.static_assert(BLOCK_M % BLOCK_N == 0, "BLOCK_M must be a multiple of BLOCK_N")
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset = _head_offset(off_hz, H, stride_z, stride_h)
    v_offset = _head_offset(off_hz, H, stride_vz, stride_vh)
    o_offset = _head_offset(off_hz, H, stride_oz, stride_oh)
    Q_block_ptr = _row_block(Q + offset, start_m * BLOCK_M, stride_n, N_CTX, HEAD_DIM,
                             BLOCK_M)
    K_block_ptr = tl.make_block_ptr(base=K + offset, shape=(HEAD_DIM, N_CTX),
                                    strides=(1, stride_n), offsets=(0, 0),
                                    block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    # V [N_CTX, HEAD_DIM] read from VT: the keys contiguous.
    V_block_ptr = tl.make_block_ptr(base=VT + v_offset, shape=(N_CTX, HEAD_DIM),
                                    strides=(1, stride_vd), offsets=(0, 0),
                                    block_shape=(BLOCK_N, HEAD_DIM), order=(0, 1))
    O_block_ptr = _row_block(O + o_offset, start_m * BLOCK_M, stride_on, N_CTX, HEAD_DIM,
                             BLOCK_M)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * LOG2E * tl.load(DESCALE) * tl.load(DESCALE + 1)
    q = tl.load(Q_block_ptr, boundary_check=(0,), padding_option="zero")
    full_end = N_CTX // BLOCK_N * BLOCK_N
    scores = (qk_scale, 1.0, 0, 0, N_CTX, 0.0, 0, 0.0, 0, 0, 0)
    acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, 0, full_end,
                                    offs_m, scores, BLOCK_N, False, False, RESCALE_VOTE)
    acc, l_i, m_i = _attn_fwd_stage(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, full_end, N_CTX,
                                    offs_m, scores, BLOCK_N, False, True, RESCALE_VOTE)
    lse = (m_i + tl.math.log2(l_i)) * LN2
    tl.store(LSE + off_hz.to(tl.int64) * N_CTX + offs_m, lse, mask=offs_m < N_CTX)
    o = acc * (tl.load(DESCALE + 2) / l_i)[:, None]
    tl.store(O_block_ptr, o.to(O.dtype.element_ty), boundary_check=(0,))


# --------------------------------------------------------------------------
# Backward
# --------------------------------------------------------------------------

@tile.jit
def _query_rows(off_hz, H, stride_z, stride_h, stride_n, N_CTX, CU_SEQLENS_Q, VARLEN,
                BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    """For the preprocess and postprocess kernels: the head's offset (64
    bits) and the element offsets within it (i32, as the row indices are)
    of this program's (BLOCK_M, BLOCK_D) block of a Q-shaped tensor, its
    rows (counted from the sequence's first), the sequence's queries and
    which of the block's elements lie in the tensor (its rows, and with
    BLOCK_D > HEAD_DIM its columns)."""
    start_q, q_len = _sequence(CU_SEQLENS_Q, off_hz // H, N_CTX, VARLEN)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    offsets = (start_q + offs_m)[:, None] * stride_n + offs_d[None, :]
    inside = (offs_m < q_len)[:, None]
    if BLOCK_D > HEAD_DIM:
        inside = inside & (offs_d < HEAD_DIM)[None, :]
    return _head_offset(off_hz, H, stride_z, stride_h), offsets, offs_m, q_len, inside


@tile.jit(launch=tile.Launch(grid=("cdiv(MAX_N_CTX, BLOCK_M)", "Z * H"), keys=("HEAD_DIM",)))
def attn_bwd_preprocess(O, DO, LSE, LSE_LOG2, DELTA, DQ_ACC, stride_z, stride_h, stride_n, Z,
                        H, N_CTX, CU_SEQLENS_Q, MAX_N_CTX, VARLEN, HEAD_DIM: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr = 0):
    WIDTH: tl.constexpr = BLOCK_D if BLOCK_D else HEAD_DIM
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset, offsets, offs_m, q_len, inside = _query_rows(
        off_hz, H, stride_z, stride_h, stride_n, N_CTX, CU_SEQLENS_Q, VARLEN, BLOCK_M, HEAD_DIM,
        WIDTH)
    mask = offs_m < q_len
    o = tl.load(O + offset + offsets, mask=inside, other=0.0)
    do = tl.load(DO + offset + offsets, mask=inside, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    lse = tl.load(LSE + off_hz.to(tl.int64) * MAX_N_CTX + offs_m, mask=mask, other=0.0)
    # Every row up to MAX_N_CTX, zeros past the sequence's queries: attn_bwd
    # reads whole blocks of them (a query it masks must not read a NaN).
    stats = off_hz.to(tl.int64) * _stats_stride(MAX_N_CTX) + offs_m
    tl.store(LSE_LOG2 + stats, lse * LOG2E, mask=offs_m < MAX_N_CTX)
    tl.store(DELTA + stats, delta, mask=offs_m < MAX_N_CTX)
    # attn_bwd adds to DQ_ACC (rows WIDTH long): start it at zero.
    acc = DQ_ACC + off_hz.to(tl.int64) * MAX_N_CTX * WIDTH
    tl.store(acc + _dq_acc_offsets(start_m * BLOCK_M, q_len, BLOCK_M, WIDTH, True),
             tl.zeros([BLOCK_M, WIDTH], tl.float32), mask=mask[:, None])


@tile.jit
def _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, lo, hi,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_D: tl.constexpr, CAUSAL_MASK: tl.constexpr,
                   QUERY_MASK: tl.constexpr, DV_LAST: tl.constexpr,
                   WINDOW_MASK: tl.constexpr = False, SOFTCAP: tl.constexpr = False,
                   QUERY_ROWS: tl.constexpr = False, ALIBI: tl.constexpr = False,
                   DROPOUT: tl.constexpr = False, DQ: tl.constexpr = True,
                   HEAD_DIM: tl.constexpr = 0):
    """BLOCK_D: the blocks' width; HEAD_DIM (0: BLOCK_D): the tensors'
    head dim, less when their columns end inside the blocks."""
    if QUERY_ROWS:
        dk, dv = _attn_bwd_dkdv_rows(dk, dv, k, v, queries, scores, start_n, lo, hi, BLOCK_M,
                                     BLOCK_N, BLOCK_D, CAUSAL_MASK, QUERY_MASK, WINDOW_MASK,
                                     SOFTCAP, ALIBI, DROPOUT, DQ, HEAD_DIM)
    else:
        dk, dv = _attn_bwd_dkdv_cols(dk, dv, k, v, queries, scores, start_n, lo, hi, BLOCK_M,
                                     BLOCK_N, BLOCK_D, CAUSAL_MASK, QUERY_MASK, DV_LAST,
                                     WINDOW_MASK, SOFTCAP, ALIBI, DROPOUT, DQ, HEAD_DIM)
    return dk, dv


@tile.jit
def _stats_blocks(BLOCK_D: tl.constexpr):
    """Whether the backward reads LSE_LOG2 and DELTA as blocks, which the
    producer warps copy with Q and dO: on Hopper, up to blocks 128 wide
    (d256's two 64 x 256 sums leave no registers for them)."""
    return tl.target_info.cuda_capability_geq(9, 0) and BLOCK_D <= 128


@tile.jit
def _head_halves(BLOCK_D: tl.constexpr, DQ: tl.constexpr):
    """Whether the backward keeps K, Q^T and dK as two halves of the head
    dim (d256 with dQ, on Hopper), so that dQ = dS K is two products of
    half its width, each added before the next: K of [64, 256] in shared
    memory cannot be read a half at a time, two buffers can.  With dQ whole
    (64 registers a thread beside dK's and dV's 128) ptxas spilled 292-452
    bytes; without dQ (the deterministic backward) none."""
    return BLOCK_D == 256 and DQ and tl.target_info.cuda_capability_geq(9, 0)


@tile.jit
def _attn_bwd_dkdv_rows(dk, dv, k, v, queries, scores, start_n, lo, hi,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_D: tl.constexpr, CAUSAL_MASK: tl.constexpr,
                        QUERY_MASK: tl.constexpr, WINDOW_MASK: tl.constexpr,
                        SOFTCAP: tl.constexpr, ALIBI: tl.constexpr = False,
                        DROPOUT: tl.constexpr = False, DQ: tl.constexpr = True,
                        HEAD_DIM: tl.constexpr = 0):
    """_attn_bwd_dkdv on the scores with queries as rows (queries x keys):
    each thread holds few rows, so LSE and DELTA are a few values a step;
    P and dS pass through shared memory to dV's and dK's products."""
    (Q, DO, LSE_LOG2, DELTA, DQ_ACC, stride_n, q_rows, q_start, q_len, max_n_ctx,
     stats_stride) = queries
    (qk_scale, cap_scale, causal_offset, window_offset, kv_len, slope, alibi_diagonal,
     dropout_p, seed, head) = scores
    offs_n = start_n + tl.arange(0, BLOCK_N)
    # LSE_LOG2's and DELTA's rows as columns of query rows: on Hopper (up to
    # d128) the producer copies them with Q and dO, as _attn_bwd_dkdv_cols
    # does its rows (stats_blocks there), but beside dropout's mask, whose
    # registers they would push into spills (8-92 bytes, ptxas 2026-11-29).
    stats_blocks = _stats_blocks(BLOCK_D) and not DROPOUT
    if stats_blocks:
        lse_block = tl.make_block_ptr(base=LSE_LOG2, shape=(max_n_ctx, 1),
                                      strides=(1, stats_stride), offsets=(lo, 0),
                                      block_shape=(BLOCK_M, 1), order=(0, 1))
        delta_block = tl.make_block_ptr(base=DELTA, shape=(max_n_ctx, 1),
                                        strides=(1, stats_stride), offsets=(lo, 0),
                                        block_shape=(BLOCK_M, 1), order=(0, 1))
    # Q's and dO's head dims may end inside the blocks (zeros past them).
    HEAD_TAIL: tl.constexpr = HEAD_DIM > 0 and HEAD_DIM < BLOCK_D
    q_block = tl.make_block_ptr(base=Q, shape=(q_rows, HEAD_DIM if HEAD_TAIL else BLOCK_D),
                                strides=(stride_n, 1), offsets=(q_start + lo, 0),
                                block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    do_block = tl.make_block_ptr(base=DO, shape=(q_rows, HEAD_DIM if HEAD_TAIL else BLOCK_D),
                                 strides=(stride_n, 1), offsets=(q_start + lo, 0),
                                 block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    inv_qk_scale = 1.0 / qk_scale
    keep_scale = 1.0 / (1.0 - dropout_p)
    for start_m in range(lo, hi, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        query_ok = offs_m < q_len
        q = _load_block(q_block, 0, QUERY_MASK, HEAD_TAIL)
        do = _load_block(do_block, 0, QUERY_MASK, HEAD_TAIL)
        if stats_blocks:
            lse = tl.load(lse_block, boundary_check=(0,), padding_option="zero")
            delta = tl.load(delta_block, boundary_check=(0,), padding_option="zero")
        else:
            lse = tl.load(LSE_LOG2 + offs_m, mask=offs_m < q_len, other=0.0)[:, None]
            delta = tl.load(DELTA + offs_m, mask=offs_m < q_len, other=0.0)[:, None]
        if SOFTCAP:
            p = tl.math.exp2(tl.math.tanh(tl.dot(q, tl.trans(k)) * cap_scale) * qk_scale - lse)
        elif ALIBI:
            p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale
                             - slope * _alibi_distance(offs_m, offs_n, alibi_diagonal) - lse)
        else:
            p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse)
        if CAUSAL_MASK or WINDOW_MASK or QUERY_MASK:
            p = tl.where(_visible(offs_m[:, None], offs_n[None, :], query_ok[:, None],
                                  causal_offset, window_offset, kv_len, CAUSAL_MASK,
                                  WINDOW_MASK, QUERY_MASK), p, 0.0)
        dp = tl.dot(do, tl.trans(v))
        if DROPOUT:
            # O took P * keep / (1 - dropout_p): so do dP and dV.
            keep = _dropout_keep(start_m, tl.arange(0, BLOCK_M)[:, None], start_n,
                                 tl.arange(0, BLOCK_N)[None, :], dropout_p, seed, head)
            dp = tl.where(keep, dp * keep_scale, 0.0)
        ds = p * (dp - delta)
        if SOFTCAP:
            capped = (tl.math.log2(p) + lse) * inv_qk_scale
            capped = tl.minimum(tl.maximum(capped, -1.0), 1.0)
            ds = ds * (1.0 - capped * capped)
        if DROPOUT:
            p = tl.where(keep, p * keep_scale, 0.0)
        dv = tl.dot(tl.trans(p.to(do.dtype)), do, dv)
        ds = ds.to(q.dtype)
        if DQ:
            dq_rows = DQ_ACC + _dq_acc_offsets(start_m, q_len, BLOCK_M, BLOCK_D, QUERY_MASK)
            dq = tl.dot(ds, k)
        dk = tl.dot(tl.trans(ds), q, dk)
        if DQ:
            if QUERY_MASK:
                tl.atomic_add(dq_rows, dq, mask=query_ok[:, None], sem="relaxed")
            else:
                tl.atomic_add(dq_rows, dq, sem="relaxed")
        q_block = tl.advance(q_block, (BLOCK_M, 0))
        do_block = tl.advance(do_block, (BLOCK_M, 0))
        if stats_blocks:
            lse_block = tl.advance(lse_block, (BLOCK_M, 0))
            delta_block = tl.advance(delta_block, (BLOCK_M, 0))
    return dk, dv


@tile.jit
def _add_dq(DQ_ACC, start_m, q_len, ds, k, query_ok, BLOCK_M: tl.constexpr,
            BLOCK_D: tl.constexpr, QUERY_MASK: tl.constexpr, COLS: tl.constexpr,
            FIRST_COL: tl.constexpr):
    """Adds dS K, COLS columns of dQ from FIRST_COL (k: those columns of K),
    to the query block's rows of DQ_ACC (rows BLOCK_D long)."""
    dq_rows = DQ_ACC + _dq_acc_offsets(start_m, q_len, BLOCK_M, BLOCK_D, QUERY_MASK, COLS,
                                       FIRST_COL)
    dq = tl.dot(ds, k)
    if QUERY_MASK:
        tl.atomic_add(dq_rows, dq, mask=query_ok[:, None], sem="relaxed")
    else:
        tl.atomic_add(dq_rows, dq, sem="relaxed")


@tile.jit
def _attn_bwd_dkdv_cols(dk, dv, k, v, queries, scores, start_n, lo, hi,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_D: tl.constexpr, CAUSAL_MASK: tl.constexpr,
                        QUERY_MASK: tl.constexpr, DV_LAST: tl.constexpr,
                        WINDOW_MASK: tl.constexpr = False, SOFTCAP: tl.constexpr = False,
                        ALIBI: tl.constexpr = False, DROPOUT: tl.constexpr = False,
                        DQ: tl.constexpr = True, HEAD_DIM: tl.constexpr = 0):
    """Adds to dK, dV of the key block at start_n the contributions of the
    query blocks [lo, hi), BLOCK_M queries at a time, and to their rows of
    DQ_ACC the key block's dS K; works on the transposed scores (keys x
    queries), query and key indices counted from the sequence's first.
    queries: (Q, DO, LSE_LOG2, DELTA, DQ_ACC, stride_n, q_rows, q_start,
    q_len, max_n_ctx, stats_stride), the program's head's tensors, whose
    rows q_start + i (of q_rows) are the sequence's q_len queries, and the
    rows of LSE_LOG2 and DELTA (max_n_ctx of them, stats_stride apart);
    scores: (qk_scale, cap_scale, causal_offset, window_offset, kv_len).
    CAUSAL_MASK hides keys j > i + causal_offset, WINDOW_MASK keys j < i +
    window_offset and keys past kv_len; QUERY_MASK hides queries at or past
    q_len (and bounds the loads).  A query that sees no key has
    LSE = -inf and P^T = exp2(+inf) = inf: only masked stages hold such
    queries, and where() zeroes them.  (Elsewhere the zero rows of k past
    kv_len meet finite P^T and add nothing; a window's lower bound is what
    can leave a query that sees no key in front of them.)

    DV_LAST picks one of two orders of a step's products, which compute the
    same values: P^T, dP^T, dS^T, dQ, dK, dV, or dP^T, P^T, dV, dS^T, dQ,
    dK.  The order decides how ptxas allocates the registers: each head
    dim has the one that does not spill (docs/performance.md).  SOFTCAP:
    the scores as in the forward (_score_scales), and dS^T times the
    derivative of the cap.  DROPOUT: dP^T and the P^T of dV's product
    masked and scaled as the forward's P V took P.  Without DQ, no dQ (the
    deterministic backward's attn_bwd_dq computes it).  With _head_halves,
    k and dk are pairs of halves of the head dim, and Q^T is read as two."""
    (Q, DO, LSE_LOG2, DELTA, DQ_ACC, stride_n, q_rows, q_start, q_len, max_n_ctx,
     stats_stride) = queries
    HALVES: tl.constexpr = _head_halves(BLOCK_D, DQ)
    HALF: tl.constexpr = BLOCK_D // 2
    # Q's and dO's head dims may end inside the blocks (zeros past them);
    # with halves, inside the second (a head dim past the first).
    HEAD_TAIL: tl.constexpr = HEAD_DIM > 0 and HEAD_DIM < BLOCK_D
    COLS: tl.constexpr = HEAD_DIM if HEAD_TAIL else BLOCK_D
    tl.static_assert(not (HALVES and HEAD_TAIL) or COLS > HALF,
                     "a head dim in halves must reach the second")
    (qk_scale, cap_scale, causal_offset, window_offset, kv_len, slope, alibi_diagonal,
     dropout_p, seed, head) = scores
    offs_n = start_n + tl.arange(0, BLOCK_N)
    # Block pointers advanced each step: the GPU lowering copies their
    # blocks ahead (tilegpu-pipeline; with warp specialization the
    # producer copies LSE_LOG2's and DELTA's too, which each thread reads
    # 16 columns of a step).  Q is read transposed, a (HEAD_DIM, q_rows)
    # view; LSE_LOG2 and DELTA a row of query columns.
    lse_block = tl.make_block_ptr(base=LSE_LOG2, shape=(1, max_n_ctx), strides=(stats_stride, 1),
                                  offsets=(0, lo), block_shape=(1, BLOCK_M), order=(1, 0))
    delta_block = tl.make_block_ptr(base=DELTA, shape=(1, max_n_ctx), strides=(stats_stride, 1),
                                    offsets=(0, lo), block_shape=(1, BLOCK_M), order=(1, 0))
    qT_block = tl.make_block_ptr(base=Q, shape=(HALF if HALVES else COLS, q_rows),
                                 strides=(1, stride_n), offsets=(0, q_start + lo),
                                 block_shape=(HALF if HALVES else BLOCK_D, BLOCK_M),
                                 order=(0, 1))
    # The first half is whole; a head dim's tail lies in the second.
    QT_TAIL: tl.constexpr = HEAD_TAIL and not HALVES
    if HALVES:
        qT_hi_block = tl.make_block_ptr(base=Q + HALF, shape=(COLS - HALF, q_rows),
                                        strides=(1, stride_n), offsets=(0, q_start + lo),
                                        block_shape=(HALF, BLOCK_M), order=(0, 1))
    do_block = tl.make_block_ptr(base=DO, shape=(q_rows, COLS), strides=(stride_n, 1),
                                 offsets=(q_start + lo, 0), block_shape=(BLOCK_M, BLOCK_D),
                                 order=(1, 0))
    inv_qk_scale = 1.0 / qk_scale
    keep_scale = 1.0 / (1.0 - dropout_p)
    # LSE_LOG2's and DELTA's rows as the producer's blocks (Hopper, up to
    # d128); with 128 queries a step DELTA is read where dS^T needs it: its
    # 32 registers a thread, live through the exponentials, made ptxas
    # spill 420 bytes at d64; with 64, reading it beside LSE is 2-6% faster
    # (H200, 2026-11-29).
    stats_blocks = _stats_blocks(BLOCK_D)
    late_delta = stats_blocks and BLOCK_M > 64
    if HALVES:   # loop-carried: each half its own tile
        dk_lo, dk_hi = dk
    for start_m in range(lo, hi, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        query_ok = offs_m < q_len
        qT = _load_block(qT_block, 1, QUERY_MASK, QT_TAIL)
        if HALVES:
            qT_hi = _load_block(qT_hi_block, 1, QUERY_MASK, HEAD_TAIL)
        do = _load_block(do_block, 0, QUERY_MASK, HEAD_TAIL)
        # LSE_LOG2 and DELTA read first, each thread the columns of P^T it
        # holds: their latency passes under the products before their use.
        # On Hopper as blocks, which the producer warps copy into shared
        # memory with the TMA (zeros past max_n_ctx; the preprocess wrote
        # zeros up to it past the sequence's queries); elsewhere, and at
        # d256 (whose two 64 x 256 sums leave no registers: it spilled 592
        # bytes so, against 396), each thread loads its columns.
        if stats_blocks:
            lse = tl.load(lse_block, boundary_check=(1,), padding_option="zero")
            if not late_delta:
                delta = tl.load(delta_block, boundary_check=(1,), padding_option="zero")
        else:
            lse = tl.load(LSE_LOG2 + offs_m, mask=query_ok, other=0.0)[None, :]
            delta = tl.load(DELTA + offs_m, mask=query_ok, other=0.0)[None, :]
        if not DV_LAST:
            dpT = tl.dot(v, tl.trans(do))
        # P^T = exp(sm_scale * K Q^T - LSE), in base 2.
        if HALVES:
            kqT = tl.dot(k[1], qT_hi, tl.dot(k[0], qT))
        else:
            kqT = tl.dot(k, qT)
        if SOFTCAP:
            pT = tl.math.exp2(tl.math.tanh(kqT * cap_scale) * qk_scale - lse)
        elif ALIBI:
            pT = tl.math.exp2(kqT * qk_scale
                              - slope * _alibi_distance(offs_n, offs_m, -alibi_diagonal) - lse)
        else:
            pT = tl.math.exp2(kqT * qk_scale - lse)
        if CAUSAL_MASK or WINDOW_MASK or QUERY_MASK:
            pT = tl.where(_visible(offs_m[None, :], offs_n[:, None], query_ok[None, :],
                                   causal_offset, window_offset, kv_len, CAUSAL_MASK,
                                   WINDOW_MASK, QUERY_MASK), pT, 0.0)
        if DROPOUT:
            keep = _dropout_keep(start_m, tl.arange(0, BLOCK_M)[None, :], start_n,
                                 tl.arange(0, BLOCK_N)[:, None], dropout_p, seed, head)
            p_kept = tl.where(keep, pT * keep_scale, 0.0)
        else:
            p_kept = pT
        if DV_LAST:
            dpT = tl.dot(v, tl.trans(do))
        else:
            dv = tl.dot(p_kept.to(do.dtype), do, dv)
        if DROPOUT:
            dpT = tl.where(keep, dpT * keep_scale, 0.0)
        # dS^T = P^T * (dP^T - delta), dP^T = V dO^T.
        if late_delta:
            delta = tl.load(delta_block, boundary_check=(1,), padding_option="zero")
        dsT = pT * (dpT - delta)
        if SOFTCAP:
            # d(cap)/d(score) = 1 - tanh^2, tanh recomputed from P^T
            # (log2 P^T = tanh * qk_scale - LSE log2 e): keeping the tanh
            # of the scores live this long made ptxas spill at d128.  It
            # is clamped to [-1, 1]: P^T = 0 (hidden, or below fp32) gives
            # -inf, and dS^T is 0 there anyway.
            capped = (tl.math.log2(pT) + lse) * inv_qk_scale
            capped = tl.minimum(tl.maximum(capped, -1.0), 1.0)
            dsT = dsT * (1.0 - capped * capped)
        dsT = dsT.to(qT.dtype)
        # dQ of these queries gets dS K (scaled by sm_scale afterwards).
        # start_m is lo (0, or a query block's start) plus whole blocks.
        # Up to d128, dK is issued before dQ's atomic adds, which then run
        # beside it (tilegpu-schedule-products); d256 on sm_80, holding two
        # 64 x 256 sums, spilled 140-352 bytes so.
        if HALVES:
            # A half of dQ at a time, each added before the next is made
            # (tilegpu-schedule-products keeps that order), then dK's
            # halves: d256 on Hopper spilled 292-452 bytes with dQ whole,
            # 0-96 so, and ran 6-15% faster (H200, 2026-11-30).
            _add_dq(DQ_ACC, start_m, q_len, tl.trans(dsT), k[0], query_ok, BLOCK_M, BLOCK_D,
                    QUERY_MASK, HALF, 0)
            _add_dq(DQ_ACC, start_m, q_len, tl.trans(dsT), k[1], query_ok, BLOCK_M, BLOCK_D,
                    QUERY_MASK, HALF, HALF)
            dk_lo = tl.dot(dsT, tl.trans(qT), dk_lo)
            dk_hi = tl.dot(dsT, tl.trans(qT_hi), dk_hi)
        else:
            if DQ:
                dq_rows = DQ_ACC + _dq_acc_offsets(start_m, q_len, BLOCK_M, BLOCK_D,
                                                   QUERY_MASK)
                dq = tl.dot(tl.trans(dsT), k)
            if BLOCK_D <= 128 or not DQ:
                dk = tl.dot(dsT, tl.trans(qT), dk)
            if DQ:
                if QUERY_MASK:
                    tl.atomic_add(dq_rows, dq, mask=query_ok[:, None], sem="relaxed")
                else:
                    tl.atomic_add(dq_rows, dq, sem="relaxed")
                if BLOCK_D > 128:
                    dk = tl.dot(dsT, tl.trans(qT), dk)
        if DV_LAST:
            dv = tl.dot(p_kept.to(do.dtype), do, dv)
        qT_block = tl.advance(qT_block, (0, BLOCK_M))
        if HALVES:
            qT_hi_block = tl.advance(qT_hi_block, (0, BLOCK_M))
        do_block = tl.advance(do_block, (BLOCK_M, 0))
        lse_block = tl.advance(lse_block, (0, BLOCK_M))
        delta_block = tl.advance(delta_block, (0, BLOCK_M))
    if HALVES:
        dk = (dk_lo, dk_hi)
    return dk, dv


@tile.jit(launch=tile.Launch(grid=("cdiv(MAX_N_KV, BLOCK_N1)", "Z * H"),
                             keys=("HEAD_DIM", "CAUSAL", "WINDOW", "SOFTCAP", "ALIBI",
                                   "DROPOUT", "DQ"),
                             length="MAX_N_CTX"))
def attn_bwd(Q, K, V, sm_scale, DO, DQ_ACC, DK, DV, LSE_LOG2, DELTA,
             stride_z, stride_h, stride_n, stride_kz, stride_kh, stride_kn,
             stride_dkz, stride_dkh, stride_dkn, Z, H, H_KV, N_CTX, N_KV,
             causal_offset, window_offset, softcap, CU_SEQLENS_Q, CU_SEQLENS_K,
             MAX_N_CTX, MAX_N_KV, VARLEN, ALIBI_SLOPES, dropout_p, DROPOUT_SEEDS,
             HEAD_DIM: tl.constexpr, BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr,
             CAUSAL: tl.constexpr, WINDOW: tl.constexpr = False,
             SOFTCAP: tl.constexpr = False, GROUP_PROGRAMS: tl.constexpr = 128,
             DV_LAST: tl.constexpr = False, QUERY_ROWS: tl.constexpr = False,
             ALIBI: tl.constexpr = False, DROPOUT: tl.constexpr = False,
             DQ: tl.constexpr = True, BLOCK_D: tl.constexpr = 0):
    tl.static_assert(BLOCK_N1 % BLOCK_M1 == 0, "BLOCK_N1 must be a multiple of BLOCK_M1")
    tl.static_assert(BLOCK_D == 0 or BLOCK_D >= HEAD_DIM, "BLOCK_D must hold HEAD_DIM")
    # The blocks' width; the tensors' head dim may end inside it (zeros
    # past it, nothing stored there).  DQ_ACC's rows are WIDTH long.
    WIDTH: tl.constexpr = BLOCK_D if BLOCK_D else HEAD_DIM
    HEAD_TAIL: tl.constexpr = WIDTH > HEAD_DIM
    tl.static_assert(not (ALIBI and SOFTCAP), "ALiBi with capped scores is not supported")
    tl.static_assert(GROUP_PROGRAMS >= 1, "GROUP_PROGRAMS must be at least 1")
    tl.static_assert(CAUSAL or not WINDOW, "a window is a band: WINDOW needs CAUSAL")
    if CAUSAL:
        # The first key block is seen by the most queries.  Groups of at
        # least GROUP_PROGRAMS programs: grouping the heads of a long
        # sequence, which fill the GPU alone, costs 2-3% of L2 reuse.
        num_blocks = tl.num_programs(0)
        pid, off_hz = _longest_first((GROUP_PROGRAMS + num_blocks - 1) // num_blocks)
    else:
        pid = tl.program_id(0)
        off_hz = tl.program_id(1)
    off_z, off_h, off_kv = _heads(off_hz, H, H_KV)
    offset = _offset(off_z, off_h, stride_z, stride_h)
    kv_offset = _offset(off_z, off_kv, stride_kz, stride_kh)
    dkv_offset = _offset(off_z, off_h, stride_dkz, stride_dkh)
    Q += offset
    K += kv_offset
    V += kv_offset
    DO += offset
    DK += dkv_offset
    DV += dkv_offset
    stats_stride = _stats_stride(MAX_N_CTX)
    LSE_LOG2 += off_hz.to(tl.int64) * stats_stride
    DELTA += off_hz.to(tl.int64) * stats_stride
    DQ_ACC += off_hz.to(tl.int64) * MAX_N_CTX * WIDTH
    qk_scale, cap_scale = _score_scales(sm_scale, softcap, SOFTCAP)
    # -- dK and dV of the key block [start_n, start_n + BLOCK_N1) ---------
    start_n = pid * BLOCK_N1
    start_q, q_len = _sequence(CU_SEQLENS_Q, off_z, N_CTX, VARLEN)
    start_k, kv_len = _sequence(CU_SEQLENS_K, off_z, N_KV, VARLEN)
    slope, alibi_diagonal = _alibi(ALIBI_SLOPES, off_z, off_h, H, q_len, kv_len, ALIBI)
    seed = _dropout_seed(DROPOUT_SEEDS, off_z, DROPOUT)
    # As in the forward; a program past its sequence's keys sees no query.
    causal_offset += (kv_len - q_len) * VARLEN
    window_offset += (kv_len - q_len) * VARLEN
    q_len = q_len * (start_n < kv_len).to(tl.int32)
    if CAUSAL:
        off = tl.minimum(tl.maximum(causal_offset, -q_len), kv_len)
    else:
        off = 0
    if WINDOW:
        low = tl.minimum(tl.maximum(window_offset, -q_len), kv_len)
    else:
        low = 0
    # Block pointers, not one offsets tensor for all four: each access
    # computes its addresses where it runs, and none stay live through the
    # loops to the dK and dV stores.  The sequence's keys only: zeros past
    # them (the next sequence's would add to dQ).
    HALVES: tl.constexpr = _head_halves(WIDTH, DQ)
    HALF: tl.constexpr = WIDTH // 2
    # The key rows' blocks: zeros past the sequence's keys and the head dim.
    ROWS: tl.constexpr = (0, 1) if HEAD_TAIL else (0,)
    if HALVES:
        # A head dim's tail lies in the second half (_attn_bwd_dkdv_cols).
        k = (tl.load(_row_block(K, start_k + start_n, stride_kn, start_k + kv_len, HALF,
                                BLOCK_N1), boundary_check=(0,), padding_option="zero"),
             tl.load(_row_block(K + HALF, start_k + start_n, stride_kn, start_k + kv_len,
                                HEAD_DIM - HALF, BLOCK_N1, HALF), boundary_check=ROWS,
                     padding_option="zero"))
        dk = (tl.zeros([BLOCK_N1, HALF], tl.float32), tl.zeros([BLOCK_N1, HALF], tl.float32))
    else:
        k = tl.load(_row_block(K, start_k + start_n, stride_kn, start_k + kv_len, HEAD_DIM,
                               BLOCK_N1, WIDTH), boundary_check=ROWS, padding_option="zero")
        dk = tl.zeros([BLOCK_N1, WIDTH], tl.float32)
    v = tl.load(_row_block(V, start_k + start_n, stride_kn, start_k + kv_len, HEAD_DIM,
                           BLOCK_N1, WIDTH), boundary_check=ROWS, padding_option="zero")
    dv = tl.zeros([BLOCK_N1, WIDTH], tl.float32)
    # What every stage reads (_attn_bwd_dkdv).
    queries = (Q, DO, LSE_LOG2, DELTA, DQ_ACC, stride_n, N_CTX, start_q, q_len, MAX_N_CTX,
               stats_stride)
    scores = (qk_scale, cap_scale, off, low, kv_len, slope, alibi_diagonal,
              dropout_p, seed, off_h)
    if CAUSAL:
        # Queries i < start_n - off see none of these keys; from the query
        # block holding the first that sees one, up to the first that sees
        # all of them (i >= start_n + BLOCK_N1 - 1 - off, rounded up to a
        # query block), the causal mask (offset 0: the diagonal queries
        # [start_n, start_n + BLOCK_N1)).
        diag_start = tl.maximum(start_n - off, 0) // BLOCK_M1 * BLOCK_M1
        all_see = tl.maximum(start_n + BLOCK_N1 - 1 - off, 0)
        diag_end = (all_see + BLOCK_M1 - 1) // BLOCK_M1 * BLOCK_M1
        if WINDOW:
            # Queries i > start_n + BLOCK_N1 - 1 - low see none of these
            # keys (the window has passed them); past start_n - low they
            # miss some.
            last = tl.minimum(start_n + BLOCK_N1 - low, q_len)
            dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, diag_start,
                                    tl.minimum(diag_end, last), BLOCK_M1, BLOCK_N1, WIDTH, True,
                                    True, DV_LAST, True, SOFTCAP, QUERY_ROWS, ALIBI, DROPOUT, DQ,
                                    HEAD_DIM)
            # Whole query blocks that see every key of the block, then the
            # rest up to the last query that sees one, masked.
            full_end = tl.maximum(start_n - low + 1, 0) // BLOCK_M1 * BLOCK_M1
            full_end = tl.minimum(full_end, q_len // BLOCK_M1 * BLOCK_M1)
            full_end = tl.maximum(full_end, diag_end)
            dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, diag_end, full_end,
                                    BLOCK_M1, BLOCK_N1, WIDTH, False, False, DV_LAST, False,
                                    SOFTCAP, QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
            dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, full_end, last,
                                    BLOCK_M1, BLOCK_N1, WIDTH, True, True, DV_LAST, True,
                                    SOFTCAP, QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
        else:
            dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, diag_start,
                                    tl.minimum(diag_end, q_len), BLOCK_M1, BLOCK_N1, WIDTH,
                                    True, True, DV_LAST, False, SOFTCAP, QUERY_ROWS, ALIBI,
                                    DROPOUT, DQ, HEAD_DIM)
            # Past q_len the stages below are empty.  Unclamped, diag_end is
            # a multiple of BLOCK_M1, and so are the query blocks the main
            # loop steps over.  Full query blocks unmasked (each query sees
            # every key of the block), then the tail block (if any) masked.
            full_end = diag_end + tl.maximum(q_len - diag_end, 0) // BLOCK_M1 * BLOCK_M1
            dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, diag_end, full_end,
                                    BLOCK_M1, BLOCK_N1, WIDTH, False, False, DV_LAST, False,
                                    SOFTCAP, QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
            dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, full_end, q_len,
                                    BLOCK_M1, BLOCK_N1, WIDTH, False, True, DV_LAST, False,
                                    SOFTCAP, QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
    else:
        # Full query blocks unmasked, then the tail block (if any) masked.
        # Each key block starts at its own diagonal and wraps around, so
        # that the programs of a head running at once add to different
        # rows of dQ, not all to the same ones.
        full_end = q_len // BLOCK_M1 * BLOCK_M1
        first = tl.minimum(start_n, full_end)
        dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, first, full_end, BLOCK_M1,
                                BLOCK_N1, WIDTH, False, False, DV_LAST, False, SOFTCAP,
                                QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
        dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, 0, first, BLOCK_M1,
                                BLOCK_N1, WIDTH, False, False, DV_LAST, False, SOFTCAP,
                                QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
        dk, dv = _attn_bwd_dkdv(dk, dv, k, v, queries, scores, start_n, full_end, q_len, BLOCK_M1,
                                BLOCK_N1, WIDTH, False, True, DV_LAST, False, SOFTCAP,
                                QUERY_ROWS, ALIBI, DROPOUT, DQ, HEAD_DIM)
    tl.store(_row_block(DV, start_k + start_n, stride_dkn, start_k + kv_len, HEAD_DIM,
                        BLOCK_N1, WIDTH), dv.to(DV.dtype.element_ty), boundary_check=ROWS)
    if HALVES:
        tl.store(_row_block(DK, start_k + start_n, stride_dkn, start_k + kv_len, HALF,
                            BLOCK_N1), (dk[0] * sm_scale).to(DK.dtype.element_ty),
                 boundary_check=(0,))
        tl.store(_row_block(DK + HALF, start_k + start_n, stride_dkn, start_k + kv_len,
                            HEAD_DIM - HALF, BLOCK_N1, HALF),
                 (dk[1] * sm_scale).to(DK.dtype.element_ty), boundary_check=ROWS)
    else:
        dk = dk * sm_scale
        tl.store(_row_block(DK, start_k + start_n, stride_dkn, start_k + kv_len, HEAD_DIM,
                            BLOCK_N1, WIDTH), dk.to(DK.dtype.element_ty), boundary_check=ROWS)


@tile.jit(launch=tile.Launch(grid=("cdiv(MAX_N_CTX, BLOCK_M)", "Z * H"), keys=("HEAD_DIM",)))
def attn_bwd_postprocess(DQ, DQ_ACC, sm_scale, stride_z, stride_h, stride_n, Z, H, N_CTX,
                         CU_SEQLENS_Q, MAX_N_CTX, VARLEN, HEAD_DIM: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr = 0):
    WIDTH: tl.constexpr = BLOCK_D if BLOCK_D else HEAD_DIM
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset, offsets, offs_m, q_len, inside = _query_rows(
        off_hz, H, stride_z, stride_h, stride_n, N_CTX, CU_SEQLENS_Q, VARLEN, BLOCK_M, HEAD_DIM,
        WIDTH)
    mask = offs_m < q_len
    acc = DQ_ACC + off_hz.to(tl.int64) * MAX_N_CTX * WIDTH
    dq = tl.load(acc + _dq_acc_offsets(start_m * BLOCK_M, q_len, BLOCK_M, WIDTH, True),
                 mask=mask[:, None], other=0.0) * sm_scale
    tl.store(DQ + offset + offsets, dq.to(DQ.dtype.element_ty), mask=inside)


# --------------------------------------------------------------------------
# The deterministic backward's dQ
# --------------------------------------------------------------------------

@tile.jit
def _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, lo, hi, offs_m,
                       masks, BLOCK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr,
                       KEY_MASK: tl.constexpr, WINDOW_MASK: tl.constexpr = False,
                       HEAD_TAIL: tl.constexpr = False):
    """Adds to dq (dQ / sm_scale of a query block) dS K over the key blocks
    [lo, hi), BLOCK_N keys at a time: P recomputed from lse (base 2), dS =
    P (dP - delta), dP = dO V^T.  K_block_ptr and V_block_ptr are
    (HEAD_DIM, N_KV) views of K and V.  masks: (qk_scale, causal_offset,
    window_offset, kv_len), the masks as in _attn_fwd_stage.  HEAD_TAIL: the
    head dim ends inside the blocks, which read zeros past it."""
    qk_scale, causal_offset, window_offset, kv_len = masks
    K_block_ptr = tl.advance(K_block_ptr, (0, lo))
    V_block_ptr = tl.advance(V_block_ptr, (0, lo))
    for start_n in range(lo, hi, BLOCK_N):
        kT = _load_block(K_block_ptr, 1, KEY_MASK, HEAD_TAIL)
        vT = _load_block(V_block_ptr, 1, KEY_MASK, HEAD_TAIL)
        p = tl.math.exp2(tl.dot(q, kT) * qk_scale - lse[:, None])
        if CAUSAL_MASK or WINDOW_MASK or KEY_MASK:
            # A row that sees no key (lse -inf) has p = inf here: zeroed.
            p = tl.where(_keys_seen(offs_m, start_n + tl.arange(0, BLOCK_N), causal_offset,
                                    window_offset, kv_len, CAUSAL_MASK, WINDOW_MASK), p, 0.0)
        ds = p * (tl.dot(do, vT) - delta[:, None])
        dq = tl.dot(ds.to(q.dtype), tl.trans(kT), dq)
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
        V_block_ptr = tl.advance(V_block_ptr, (0, BLOCK_N))
    return dq


@tile.jit(launch=tile.Launch(grid=("cdiv(MAX_N_CTX, BLOCK_M)", "Z * H"),
                             keys=("HEAD_DIM", "CAUSAL", "WINDOW"), length="MAX_N_CTX"))
def attn_bwd_dq(DQ, Q, K, V, DO, LSE_LOG2, DELTA, sm_scale, stride_z, stride_h, stride_n,
                stride_kz, stride_kh, stride_kn, Z, H, H_KV, N_CTX, N_KV, causal_offset,
                window_offset, CU_SEQLENS_Q, CU_SEQLENS_K, MAX_N_CTX, VARLEN,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                CAUSAL: tl.constexpr, WINDOW: tl.constexpr = False,
                BLOCK_D: tl.constexpr = 0):
    """dQ of the deterministic backward, without atomics: each program owns
    a query block and sums dS K over the key blocks its rows see, in one
    order (the forward's stages), after attn_bwd_preprocess (DELTA) and
    beside attn_bwd without DQ (dK, dV).  The tensors, masks and packed
    sequences as in attn_fwd; DQ is laid out as Q.  BLOCK_D as attn_bwd's."""
    tl.static_assert(CAUSAL or not WINDOW, "a window is a band: WINDOW needs CAUSAL")
    WIDTH: tl.constexpr = BLOCK_D if BLOCK_D else HEAD_DIM
    HEAD_TAIL: tl.constexpr = WIDTH > HEAD_DIM
    ROWS: tl.constexpr = (0, 1) if HEAD_TAIL else (0,)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z, off_h, off_kv = _heads(off_hz, H, H_KV)
    offset = _offset(off_z, off_h, stride_z, stride_h)
    kv_offset = _offset(off_z, off_kv, stride_kz, stride_kh)
    start_q, q_len = _sequence(CU_SEQLENS_Q, off_z, N_CTX, VARLEN)
    start_k, kv_len = _sequence(CU_SEQLENS_K, off_z, N_KV, VARLEN)
    causal_offset += (kv_len - q_len) * VARLEN
    window_offset += (kv_len - q_len) * VARLEN
    kv_len = kv_len * (start_m * BLOCK_M < q_len).to(tl.int32)
    m0 = start_q + start_m * BLOCK_M
    q = tl.load(_row_block(Q + offset, m0, stride_n, N_CTX, HEAD_DIM, BLOCK_M, WIDTH),
                boundary_check=ROWS, padding_option="zero")
    do = tl.load(_row_block(DO + offset, m0, stride_n, N_CTX, HEAD_DIM, BLOCK_M, WIDTH),
                 boundary_check=ROWS, padding_option="zero")
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = off_hz.to(tl.int64) * _stats_stride(MAX_N_CTX) + offs_m
    lse = tl.load(LSE_LOG2 + rows, mask=offs_m < q_len, other=0.0)
    delta = tl.load(DELTA + rows, mask=offs_m < q_len, other=0.0)
    K_block_ptr = tl.make_block_ptr(base=K + kv_offset, shape=(HEAD_DIM, N_KV),
                                    strides=(1, stride_kn), offsets=(0, start_k),
                                    block_shape=(WIDTH, BLOCK_N), order=(0, 1))
    V_block_ptr = tl.make_block_ptr(base=V + kv_offset, shape=(HEAD_DIM, N_KV),
                                    strides=(1, stride_kn), offsets=(0, start_k),
                                    block_shape=(WIDTH, BLOCK_N), order=(0, 1))
    off, low, first, left_end, full_end, diag_end = _key_stages(
        start_m * BLOCK_M, q_len, kv_len, causal_offset, window_offset, BLOCK_M, BLOCK_N,
        CAUSAL, WINDOW)
    masks = (sm_scale * LOG2E, off, low, kv_len)
    dq = tl.zeros([BLOCK_M, WIDTH], tl.float32)
    if CAUSAL:
        if WINDOW:
            dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, first,
                                    left_end, offs_m, masks, BLOCK_N, True, True, True, HEAD_TAIL)
            dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, left_end,
                                    full_end, offs_m, masks, BLOCK_N, False, False, False,
                                    HEAD_TAIL)
            dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, full_end,
                                    diag_end, offs_m, masks, BLOCK_N, True, True, True, HEAD_TAIL)
        else:
            dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, 0,
                                    full_end, offs_m, masks, BLOCK_N, False, False, False,
                                    HEAD_TAIL)
            dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, full_end,
                                    diag_end, offs_m, masks, BLOCK_N, True, True, False, HEAD_TAIL)
    else:
        dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, 0, full_end,
                                offs_m, masks, BLOCK_N, False, False, False, HEAD_TAIL)
        dq = _attn_bwd_dq_stage(dq, q, do, lse, delta, K_block_ptr, V_block_ptr, full_end,
                                diag_end, offs_m, masks, BLOCK_N, False, True, False, HEAD_TAIL)
    tl.store(_row_block(DQ + offset, m0, stride_n, start_q + q_len, HEAD_DIM, BLOCK_M, WIDTH),
             (dq * sm_scale).to(DQ.dtype.element_ty), boundary_check=ROWS)
